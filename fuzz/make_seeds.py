#!/usr/bin/env python3
"""Writes the large fuzz seeds: deep nesting and long chains, the inputs that mutation of the small
committed corpora never grows into (those stayed under ~850 bytes, while the nesting and chain
defects of issue 25 need tens of kilobytes).

Every seed fits the fuzzers' -max_len=65536 (libFuzzer truncates longer inputs); the data files
that lesson checks read through recorded() are not inputs and may be larger. Everything goes under
fuzz/corpus-run/ (git-ignored), regenerated on each run:

    python3 fuzz/make_seeds.py            # → fuzz/corpus-run/seeds/<target>/, fuzz/corpus-run/data/

scripts/fuzz.sh runs it before the fuzzers and passes fuzz/corpus-run/seeds/<target> to each.
"""
import json
import os
import shutil
import sys

MAX_LEN = 65536  # the fuzzers' -max_len
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus-run")
SCHEMA = "tilescope-session/1"
written = []


def seed(target, name, text, limit=MAX_LEN):
    data = text.encode() if isinstance(text, str) else text
    if len(data) > limit:
        sys.exit(f"make_seeds: {target}/{name} is {len(data)} bytes, over {limit}")
    folder = os.path.join(OUT, "seeds", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    written.append((target, name, len(data)))


def data_file(name, text):
    folder = os.path.join(OUT, "data")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)
    written.append(("data", name, len(text)))


def nested(open_, close, depth, inner):
    return open_ * depth + inner + close * depth


def fit(make, budget):
    """The largest n (by doubling, then bisection) whose make(n) fits in `budget` bytes."""
    lo, hi = 1, 2
    while len(make(hi).encode()) <= budget:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if len(make(mid).encode()) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


# [SECTION] Models: a single-consumer chain, one op a line, as long as fits

def chain_model(n, op="relu", shape="[4, 4]"):
    lines = [f"x: {shape}", f"a1 = {op}(x)"]
    lines += [f"a{i} = {op}(a{i - 1})" for i in range(2, n + 1)]
    return "\n".join(lines) + "\n"


def compact_chain(n):
    # The shortest spelling of a chain: no spaces; a 2-element tensor keeps every check cheap.
    return "x:[2]\n" + "".join(f"a{i}=relu({'x' if i == 1 else f'a{i - 1}'})\n"
                               for i in range(1, n + 1))


def model_seeds():
    seed("model", "deep-parens-20000.model", "x: [4]\ny = " + nested("(", ")", 20000, "x") + "\n")
    seed("model", "deep-calls-10000.model", "x: [4]\ny = " + nested("relu(", ")", 10000, "x") + "\n")
    seed("model", "deep-unary-30000.model", "x: [4]\ny = " + "-" * 30000 + "x\n")
    seed("model", "deep-shape-20000.model", "x: " + nested("[", "]", 20000, "4") + "\n")
    seed("model", "deep-list-20000.model",
         "x: [4]\ny = cat(" + nested("[", "]", 20000, "x, x") + ", dim=0)\n")
    seed("model", "attr-chain-30000.model", "x: [4, 4]\ny = x" + ".T" * 30000 + "\n")
    seed("model", "binary-chain-15000.model", "x: [4]\ny = x" + " * 2" * 15000 + "\n")
    seed("model", "power-chain-12000.model", "N = 2" + " ** 1" * 12000 + "\nx: [N]\ny = relu(x)\n")
    n = fit(compact_chain, MAX_LEN)
    seed("model", f"chain-{n}.model", compact_chain(n))
    seed("model", "chain-1000.model", chain_model(1000))
    n = fit(lambda k: "input [1, 8]\nnn.Sequential(" + "nn.ReLU()," * k + ")\n", MAX_LEN)
    seed("model", f"sequential-{n}.model", "input [1, 8]\nnn.Sequential(" + "nn.ReLU()," * n + ")\n")
    n = fit(lambda k: "input [1, 8]\n" + "ReLU()\n" * k, MAX_LEN)
    seed("model", f"layers-{n}.model", "input [1, 8]\n" + "ReLU()\n" * n)
    seed("model", "nested-sequential-4000.model",
         "input [1, 8]\n" + nested("nn.Sequential(", ")", 4000, "nn.ReLU()") + "\n")
    seed("model", "long-name.model", "x: [4]\n" + "y" * 60000 + " = relu(x)\n")
    # Many tensors feeding one op: wide rather than deep.
    n = fit(lambda k: "".join(f"t{i}: [2]\n" for i in range(k)) + "y = cat([" +
            ", ".join(f"t{i}" for i in range(k)) + "], dim=0)\n", MAX_LEN)
    seed("model", f"wide-cat-{n}.model", "".join(f"t{i}: [2]\n" for i in range(n)) + "y = cat([" +
         ", ".join(f"t{i}" for i in range(n)) + "], dim=0)\n")


# [SECTION] Sessions: deep JSON in the fields copied whole, long chains and step lists

SMALL_MODEL = "x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n"


def session(**fields):
    doc = {"schema": SCHEMA, "model_text": SMALL_MODEL, "model_path": "", "machine": "tiny"}
    doc.update(fields)
    return json.dumps(doc, separators=(",", ":"))


def raw_session(extra):
    """A session with `extra` spliced in as raw JSON text (nesting json.dumps would recurse on)."""
    return session()[:-1] + "," + extra + "}"


def session_seeds():
    deep_array = nested("[", "]", 20000, "")
    deep_object = nested('{"a":', "}", 6000, "1")
    seed("session", "deep-lesson-array-20000.json", raw_session('"lesson":' + deep_array))
    seed("session", "deep-lesson-object-6000.json", raw_session('"lesson":' + deep_object))
    seed("session", "deep-lesson-open-20000.json",
         raw_session('"lesson":{"open":' + deep_array + "}"))
    seed("session", "deep-progress-known-20000.json",
         raw_session('"lesson_progress":{"01-model-to-graph":' + deep_array + "}"))
    seed("session", "deep-progress-unknown-20000.json",
         raw_session('"lesson_progress":{"no-such-lesson":' + deep_array + "}"))
    seed("session", "deep-progress-field-20000.json",
         raw_session('"lesson_progress":{"01-model-to-graph":{"predictions":' + deep_array + "}}"))
    seed("session", "deep-progress-array-20000.json", raw_session('"lesson_progress":' + deep_array))
    seed("session", "deep-steps-20000.json", raw_session('"steps":' + deep_array))
    seed("session", "deep-controls-20000.json", raw_session('"controls":{"a":' + deep_array + "}"))
    seed("session", "deep-recent-20000.json", raw_session('"recent":' + deep_array))
    seed("session", "deep-unknown-field-20000.json", raw_session('"future":' + deep_array))
    seed("session", "deep-document-30000.json", nested("[", "]", 30000, ""))
    # Just inside the readers' bound (io::kMaxJsonDepth = 64 levels, the document's own included):
    # these reach the lesson player, where the deeper ones are refused at the parse.
    shallow = nested("[", "]", 62, "")
    seed("session", "deep-lesson-array-62.json", raw_session('"lesson":' + shallow))
    seed("session", "deep-lesson-open-61.json",
         raw_session('"lesson":{"open":' + nested("[", "]", 61, "") + "}"))
    seed("session", "deep-progress-known-61.json",
         raw_session('"lesson_progress":{"01-model-to-graph":' + nested("[", "]", 61, "") + "}"))
    seed("session", "deep-progress-field-60.json",
         raw_session('"lesson_progress":{"01-model-to-graph":{"predictions":' +
                     nested('{"a":', "}", 60, "1") + "}}"))
    n = fit(lambda k: session(controls={f"c{i}": "1" for i in range(k)}), MAX_LEN)
    seed("session", f"unknown-controls-{n}.json", session(controls={f"c{i}": "1" for i in range(n)}))
    n = fit(lambda k: session(recent=[f"/tmp/r{i}.model" for i in range(k)]), MAX_LEN)
    seed("session", f"recent-{n}.json", session(recent=[f"/tmp/r{i}.model" for i in range(n)]))
    for view in ("schedule", "tiles", "memory"):
        n = fit(lambda k: session(model_text=compact_chain(k), view=view, steps=""), MAX_LEN)
        seed("session", f"chain-{n}-{view}.json",
             session(model_text=compact_chain(n), view=view, steps=""))
    n = fit(lambda k: session(model_text=compact_chain(k), view="schedule",
                              steps="fuse(" + ", ".join(f"relu{i}" for i in range(k)) + ")"),
            MAX_LEN)
    seed("session", f"chain-{n}-fused.json",
         session(model_text=compact_chain(n), view="schedule",
                 steps="fuse(" + ", ".join(f"relu{i}" for i in range(n)) + ")"))
    n = fit(lambda k: session(steps="; ".join(["reorder(k, i)", "reorder(i, k)"] * k),
                              view="schedule"), MAX_LEN)
    seed("session", f"steps-{2 * n}.json",
         session(steps="; ".join(["reorder(k, i)", "reorder(i, k)"] * n), view="schedule"))
    n = fit(lambda k: session(redo="; ".join(["reorder(k, i)", "reorder(i, k)"] * k)), MAX_LEN)
    seed("session", f"redo-{2 * n}.json",
         session(redo="; ".join(["reorder(k, i)", "reorder(i, k)"] * n)))
    seed("session", "lesson-open.json",
         session(lesson={"open": "02-data-movement-fusion", "step": "2", "teacher": True,
                         "panel": "model", "focus": "p1", "model_loaded": "epi"},
                 lesson_progress={"02-data-movement-fusion": {"done": [1, 2],
                                                              "predictions": {}}}))


# [SECTION] Lessons and the check language

def lesson_head(title="Deep"):
    return f"---\ntitle: {title}\nlevel: beginner\nminutes: 5\n---\n"


def lesson_seeds():
    seed("lesson", "deep-parens-20000.txt", nested("(", ")", 20000, "1") + " == 1\n")
    seed("lesson", "deep-calls-10000.txt", nested("abs(", ")", 10000, "1") + " == 1\n")
    seed("lesson", "deep-lists-20000.txt", "len(" + nested("[", "]", 20000, "1") + ") == 1\n")
    seed("lesson", "deep-unary-30000.txt", "-" * 30000 + "1 == 1\n")
    seed("lesson", "long-sum-15000.txt", "1" + " + 1" * 15000 + " == 15001\n")
    n = fit(lambda k: "len([" + ", ".join(["1"] * k) + "]) == " + str(k) + "\n", MAX_LEN)
    seed("lesson", f"long-list-{n}.txt", "len([" + ", ".join(["1"] * n) + "]) == " + str(n) + "\n")
    seed("lesson", "contains-long.txt",
         'contains("' + "a" * 30000 + '", "' + "a" * 15000 + 'b") == 0\n')
    # recorded() reading the data files written below: the deep list comes back as a list whose
    # element is the rest, printed as JSON text.
    gemm = "```model id=m\nA: [8, 8]\nB: [8, 8] weight\nC = A @ B\n```\n"
    checks = ['len(recorded("fuzz/corpus-run/data/deep-list-300000.json", "")) == 1',
              'len(recorded("fuzz/corpus-run/data/deep-list-20000.json", "0/0/0")) == 1',
              'recorded("fuzz/corpus-run/data/deep-object-20000.json", "a/a/a") == 1',
              'len(recorded("fuzz/corpus-run/data/wide-list.json", "")) == 100000']
    for i, c in enumerate(checks):
        seed("lesson", f"recorded-deep-{i}.md",
             lesson_head() + gemm + "```check model=m machine=tiny\n" + c + "\n```\n")
    # A long chain as a lesson model, with checks that walk it.
    n = fit(lambda k: lesson_head() + "```model id=m\n" + compact_chain(k) +
            "```\n```check model=m\nops(m) >= 1\nheaviest(3) == heaviest(3)\nkinds(m) == kinds(m)\n"
            "```\n", MAX_LEN)
    seed("lesson", f"chain-{n}.md",
         lesson_head() + "```model id=m\n" + compact_chain(n) +
         "```\n```check model=m\nops(m) >= 1\nheaviest(3) == heaviest(3)\nkinds(m) == kinds(m)\n```\n")
    # Steps blocks chained through from=, each one step more than the last.
    def chained(k):
        blocks = [gemm, "```steps id=s0 model=m\nreorder(k, i)\n```\n"]
        blocks += [f"```steps id=s{i} from=s{i - 1}\nreorder({'i, k' if i % 2 else 'k, i'})\n```\n"
                   for i in range(1, k)]
        return lesson_head() + "".join(blocks) + f"```check model=m\napplied(s{k - 1}) == {k}\n```\n"
    n = fit(chained, MAX_LEN)
    seed("lesson", f"chained-steps-{n}.md", chained(n))
    # One steps block of thousands of steps.
    def long_steps(k):
        return (lesson_head() + gemm + "```steps id=s model=m\n" +
                "reorder(k, i)\nreorder(i, k)\n" * k + "```\n```check model=m\napplied(s) >= 1\n```\n")
    n = fit(long_steps, MAX_LEN)
    seed("lesson", f"steps-{2 * n}.md", long_steps(n))
    # Deep nesting inside a lesson's check block and a predict answer.
    seed("lesson", "deep-check-block.md",
         lesson_head() + gemm + "```check model=m\n" + nested("(", ")", 20000, "ops(m)") +
         " == 1\n```\n")
    seed("lesson", "deep-predict-answer.md",
         lesson_head() + gemm + "```predict id=p\nquestion: how many?\nanswer: " +
         nested("(", ")", 20000, "ops(m)") + "\nwithin 10%\nexplain: one\n```\n")
    # The recordings: a list nested deeper than any stack holds a recursive walk over.
    data_file("deep-list-300000.json", nested("[", "]", 300000, ""))
    data_file("deep-list-20000.json", nested("[", "]", 20000, ""))
    data_file("deep-object-20000.json", nested('{"a":', "}", 20000, "1"))
    data_file("wide-list.json", "[" + ",".join(["[1]"] * 100000) + "]")


# [SECTION] Machines and din traces

def machine_seeds():
    head = "name = big\nkind = cpu\ncores = 1\nclock = 1 GHz\npeak fp32 simd = 16 GFLOP/s\n"
    level = "[level L{i}]\nsize = {s} KiB\nline = 64 B\nways = 2\nlatency = 4 cycles\n"
    def levels(k):
        return head + "".join(level.format(i=i, s=2 ** min(i, 20)) for i in range(1, k + 1)) + \
            "[memory DRAM]\nsize = 1 GiB\nbandwidth = 8 GB/s\nlatency = 100 ns\n"
    seed("machine", f"levels-{fit(levels, MAX_LEN)}.machine", levels(fit(levels, MAX_LEN)))
    seed("machine", "long-line.machine", head + "description = " + "x" * 60000 + "\n")
    seed("machine", "long-number.machine", "name = n\nclock = " + "9" * 60000 + " GHz\n")
    seed("machine", "many-comments.machine", head + "# c\n" * 15000)
    n = fit(lambda k: head + "cores = 2\n" * k, MAX_LEN)
    seed("machine", f"repeated-key-{n}.machine", head + "cores = 2\n" * n)


def din_seeds():
    def trace(k):
        return "".join(f"{i % 3} {i * 64 + (i % 7) * 8:x} {4 << (i % 4)}\n" for i in range(k))
    n = fit(trace, MAX_LEN)
    seed("din", f"trace-{n}.din", trace(n))
    seed("din", "long-line.din", "0 " + "f" * 60000 + " 4\n")
    seed("din", "long-comment.din", "# " + "c" * 60000 + "\n0 0 4\n")
    seed("din", "blank-lines.din", "\n" * 60000 + "0 0 4\n")
    seed("din", "huge-size.din", "0 0 18446744073709551615\n1 ffffffffffffffff 4294967296\n")


# [SECTION] GUI scripts and step text (the new targets)

def escaped(text):
    return text.replace("\n", "\\n")


def script_seeds():
    def chain_script(k):
        return "set-model-text " + escaped(compact_chain(k)) + "\nview schedule\nwait-frames 2\n"
    n = fit(chain_script, MAX_LEN)
    seed("script", f"chain-{n}-schedule.script", chain_script(n))
    n = fit(lambda k: 'view schedule\napply "kernel(matmul0)"\n' +
            'apply "reorder(j, i)"\napply "reorder(i, j)"\n' * k, MAX_LEN)
    seed("script", f"apply-{2 * n}.script", 'view schedule\napply "kernel(matmul0)"\n' +
         'apply "reorder(j, i)"\napply "reorder(i, j)"\n' * n)
    def one_apply(k):
        return ('apply "kernel(matmul0); ' + "; ".join(["reorder(j, i)", "reorder(i, j)"] * k) +
                '"\n' +
                "undo\n" * 10 + "redo\n" * 10 + "goto-step 3\nmachine tiny\n")
    n = fit(one_apply, MAX_LEN)
    seed("script", f"one-apply-{2 * n}.script", one_apply(n))
    def palette(k):
        lines = ["palette input x 4 4", "select-tensor x"]
        lines += [f"palette add relu {'x' if i == 0 else f't{i}'}" for i in range(k)]
        return "\n".join(lines) + "\nview schedule\n"
    n = fit(palette, MAX_LEN)
    seed("script", f"palette-chain-{n}.script", palette(n))
    seed("script", "deep-model-text.script",
         "set-model-text x: [4]\\ny = " + nested("(", ")", 20000, "x") + "\n")
    seed("script", "deep-apply.script", 'apply "' + nested("tile(", ")", 10000, "i") + '"\n')
    n = fit(lambda k: "".join(f"control schedule.tile-log2 {i % 8 + 1}\n" for i in range(k)), MAX_LEN)
    seed("script", f"controls-{n}.script",
         "".join(f"control schedule.tile-log2 {i % 8 + 1}\n" for i in range(n)))
    seed("script", "type-long.script", "type " + "x" * 60000 + "\n")
    seed("script", "many-keys.script", "key Alt+Right\nkey Ctrl+Z\n" * 2500)
    seed("script", "many-clicks.script", "click 100 100\ndrag 1 1 500 500\nscroll 300 300 -3\n" * 1000)
    seed("script", "zoom-pan-extremes.script",
         "zoom 1e308\npan 1e308 -1e308\nzoom 1e-308 5 5\nfit\nresize 8192 8192\nresize 16 16\n" * 500)
    lessons = ["lesson open 1", "lesson next", "lesson next", "lesson prev", "lesson goto 3",
               "lesson reveal", "teacher on", "lesson reset", "lesson close"]
    seed("script", "lessons-walk.script",
         "".join(f"lesson open {i}\nlesson next\nlesson goto 2\nlesson reveal\nlesson close\n"
                 for i in range(1, 15)) + ("\n".join(lessons) + "\n") * 100)
    seed("script", "replace-line-far.script",
         "replace-line 1000000000 y = relu(x)\nreplace-line 5 z = relu(y)\n" * 100)


def steps_seeds():
    gemm = "A: [16, 16]\nB: [16, 16] weight\nC = A @ B\n%%\n"
    seed("steps", "deep-parens.steps", gemm + nested("tile(", ")", 10000, "i") + "\n")
    seed("steps", "deep-brackets.steps", gemm + "tile(" + nested("[", "]", 20000, "i") + ", 2)\n")
    n = fit(lambda k: gemm + "reorder(k, i)\nreorder(i, k)\n" * k, MAX_LEN)
    seed("steps", f"reorders-{2 * n}.steps", gemm + "reorder(k, i)\nreorder(i, k)\n" * n)
    n = fit(lambda k: gemm + "# comment\n;\n" * k, MAX_LEN)
    seed("steps", f"empty-steps-{n}.steps", gemm + "# comment\n;\n" * n)
    n = fit(lambda k: gemm + "reorder(" + ", ".join(["i"] * k) + ")\n", MAX_LEN)
    seed("steps", f"long-args-{n}.steps", gemm + "reorder(" + ", ".join(["i"] * n) + ")\n")
    def chain_fuse(k):
        return compact_chain(k) + "%%\nfuse(" + ", ".join(f"relu{i}" for i in range(k)) + ")\n"
    n = fit(chain_fuse, MAX_LEN)
    seed("steps", f"chain-{n}-fuse.steps", chain_fuse(n))
    def chain_pairs(k):
        return compact_chain(k) + "%%\n" + "".join(
            f"kernel(relu{i})\nfuse(relu{i}, relu{i + 1})\n" for i in range(0, k - 1, 2))
    n = fit(chain_pairs, MAX_LEN)
    seed("steps", f"chain-{n}-pairs.steps", chain_pairs(n))
    seed("steps", "long-number.steps", gemm + "tile(i, " + "9" * 60000 + ")\n")
    seed("steps", "long-name.steps", gemm + "tile(" + "i" * 60000 + ", 2)\n")


def main():
    for old in ("seeds", "data"):
        shutil.rmtree(os.path.join(OUT, old), ignore_errors=True)
    model_seeds()
    session_seeds()
    lesson_seeds()
    machine_seeds()
    din_seeds()
    script_seeds()
    steps_seeds()
    print(f"make_seeds: {len(written)} files under {os.path.relpath(OUT, ROOT)}/ "
          f"({sum(n for _, _, n in written) // 1024} KiB)")


if __name__ == "__main__":
    main()
