# SPDX-License-Identifier: GPL-2.0
"""The summary as text: the caption, each Section as an aligned table
with its source, the figures drawn and the notes."""
from bench import contract


def summary_lead(meta):
    """What the summary says first when latency is not hardware time."""
    src = meta.get("timing_source")
    if contract.timing_is_hardware(src):
        return ""
    return (f"{contract.timing_label(src)}: latency here is emulated, so this summary "
            "leads with page walks, fault counts and the fault path's cost")


def text_summary(run, caption, lead, sections, figures, notes):
    lines = [f"run {run}"] + ["  " + c for c in caption.split("\n")]
    if lead:
        lines.append("  " + lead)
    for s in sections:
        lines.append("")
        lines.append(f"{s.title}  [{s.note}]")
        if not s.rows:
            lines.append("  (nothing to compare)")
            continue
        # a section without a header is lines of text (a reason, say)
        head = [s.header] if s.header else []
        width = [max(len(str(x)) for x in col) for col in zip(*head, *s.rows)]
        for row in head + s.rows:
            lines.append("  " + "  ".join(str(x).ljust(w) for x, w in zip(row, width)).rstrip())
    lines.append("")
    lines.append("figures: " + (", ".join(figures) if figures else "none"))
    for n in notes:
        lines.append("note: " + n)
    return "\n".join(lines)
