"""Answer quality of another engine for the same GGUF: ``transformers`` loading the file
with the ``gguf`` package on the torch that is already installed, against llama.cpp.

The same 1.5B Q4_K_M file, the same Base prompts (the first ``--tasks`` of
``loop.py``'s seeded order, asked through the real :class:`FeedbackLoop` with
``static=False, dynamic=False``), greedy decoding in both engines. llama.cpp's answers
are read from a ``loop.py`` checkpoint of the same tasks, so only the other engine runs
here. Reported: load time, seconds per task, tokens per second of answer, accuracy with
``loop.py``'s judge, and how many final requests are the same as llama.cpp's.

    pip install gguf accelerate          # transformers comes with sentence-transformers
    python benchmarks/local_engines.py --tasks 20 --checkpoint /tmp/h9/loop-1.5b-200.jsonl

transformers de-quantizes the GGUF into float32 tensors at every start (it has no
quantized CPU kernels for GGUF), so this is slow by construction; it is measured because
it needs no compiler and no binary wheel.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autofeedback import ApiCatalog, FeedbackLoop, Scanner
from autofeedback.loop._llm import Usage
from autofeedback.loop._local_models import ensure_local_model
from autofeedback.sandbox import Sandbox
from benchmarks import _datasets
from benchmarks._results import write_section
from benchmarks.loop import (
    Outcome,
    final_call,
    intent,
    judged,
    load_checkpoint,
    matches,
    task_list,
)


class TransformersLLM:
    """Greedy chat completion with ``transformers`` on a GGUF file (float32 on CPU)."""

    def __init__(self, gguf: Path, *, max_tokens: int = 512) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        started = time.perf_counter()
        self.tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # from_pretrained returns the model in inference (eval) mode
        self.model: Any = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
        )
        self.load_seconds = time.perf_counter() - started
        self.max_tokens = max_tokens
        self.last_usage: Usage | None = None
        self.answer_seconds: list[float] = []
        self.answer_tokens: list[int] = []

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        import torch

        ids: Any = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], add_generation_prompt=True, return_tensors="pt"
        )
        if not isinstance(ids, torch.Tensor):  # transformers 5 returns a BatchEncoding
            ids = ids["input_ids"]
        started = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(
                ids, max_new_tokens=self.max_tokens, do_sample=False, attention_mask=None
            )
        new = out[0, ids.shape[1] :]
        self.answer_seconds.append(time.perf_counter() - started)
        self.answer_tokens.append(int(new.shape[0]))
        self.last_usage = Usage(int(ids.shape[1]), int(new.shape[0]))
        return str(self.tokenizer.decode(new, skip_special_tokens=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--checkpoint", type=Path, required=True, help="a loop.py checkpoint")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    if _datasets.shared_data_dir() is None:
        print("shared data (../shared/data) not found; nothing to measure", file=sys.stderr)
        return 2
    done, _ = load_checkpoint(args.checkpoint, Outcome)
    tasks = [t for t in task_list(200)[: args.tasks] if "Base" in done.get(t.id, {})]
    if len(tasks) < args.tasks:
        print(f"only {len(tasks)} of the tasks are in {args.checkpoint}", file=sys.stderr)
    from retriever import ApiRetriever

    llm = TransformersLLM(ensure_local_model("1.5b"))
    print(f"transformers loaded the GGUF in {llm.load_seconds:.0f} s", flush=True)
    retriever = ApiRetriever()
    mine: dict[str, dict[str, Any]] = {}
    same = 0
    for i, task in enumerate(tasks, 1):
        catalog = ApiCatalog.from_obj(task.spec, source=task.dataset)
        with Sandbox(catalog, terse=True) as sandbox:
            loop = FeedbackLoop(
                llm,
                catalog,
                base_url=sandbox.url,
                scanner=Scanner(catalog, retriever=retriever),
                static=False,
                dynamic=False,
            )
            result = loop.run(task.instruction, intent=intent(task))
        name, call_args = final_call(result.request, catalog)
        final = f"{name}({json.dumps(call_args, sort_keys=True, default=str)})" if name else ""
        mine[task.id] = {
            "Base": done[task.id]["Base"],
            "transformers": Outcome(
                correct=matches(result.request, task.calls[0], catalog),
                tokens=result.tokens,
                seconds=llm.answer_seconds[-1],
                attempts=1,
                stop=result.stop_reason,
                final=final,
            ),
        }
        same += final == done[task.id]["Base"].final
        print(
            f"[{i}/{len(tasks)}] {task.id} same={final == done[task.id]['Base'].final}", flush=True
        )
    fair = judged(mine, ["Base", "transformers"], tasks)
    n = len(tasks)
    rate = sum(llm.answer_tokens) / sum(llm.answer_seconds)
    table = "\n".join(
        [
            f"The first {n} tasks of `loop.py`'s order, Base prompt, greedy, the same "
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M file; 2 CPU cores shared with other work.",
            "",
            "| engine | load | seconds / task | answer tokens / s | accuracy (strict) "
            "| accuracy | same final request as llama.cpp |",
            "|---|---|---|---|---|---|---|",
            f"| llama-cpp-python 0.3.36 | about 8 s | "
            f"{statistics.mean(mine[t.id]['Base'].seconds for t in tasks):.1f} "
            "| see docs/benchmarks.md "
            f"| {sum(mine[t.id]['Base'].correct for t in tasks) / n:.3f} "
            f"| {sum(fair['Base'][t.id] for t in tasks) / n:.3f} | — |",
            f"| transformers {__import__('transformers').__version__} + gguf, float32 "
            f"| {llm.load_seconds:.0f} s | {statistics.mean(llm.answer_seconds):.1f} "
            f"| {rate:.1f} | {sum(mine[t.id]['transformers'].correct for t in tasks) / n:.3f} "
            f"| {sum(fair['transformers'][t.id] for t in tasks) / n:.3f} | {same}/{n} |",
        ]
    )
    print(table)
    if not args.no_write:
        cmd = (
            f"python benchmarks/local_engines.py --tasks {args.tasks} "
            f"--checkpoint {args.checkpoint}"
        )
        write_section("Local engines: answer quality on loop tasks", cmd, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
