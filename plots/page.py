# SPDX-License-Identifier: GPL-2.0
"""RUN/index.html: the caption, the summary's sections as tables, each
figure with its caption (from its plot module's FIGURES) and the run's
metadata."""
import html
import json
import os

from plots.table import order_key


CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1320px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
.caption { color: #444; }
.timing { color: #b00000; font-weight: bold; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.src { color: #555; font-size: 0.85em; margin-top: -0.3em; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { color: #444; font-size: 0.9em; }
.note { color: #8a5a00; }
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 2em; }
"""


def esc(x):
    return html.escape(str(x))


def meta_value(v):
    if isinstance(v, dict):
        if not v:
            return "{}"
        return "; ".join(f"{k}: {meta_value(x)}" for k, x in v.items())
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    return str(v)


def html_table(header, rows, numeric_from=1):
    h = "<tr>" + "".join(f"<th>{esc(x)}</th>" for x in header) + "</tr>" if header else ""
    body = []
    for row in rows:
        cells = [f'<td class="num">{esc(x)}</td>' if i >= numeric_from else f"<td>{esc(x)}</td>"
                 for i, x in enumerate(row)]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return "<table>" + h + "".join(body) + "</table>"


def figure_text(texts, name):
    """Caption of a figure from texts ({figure: caption}); "latency-page"
    is latency's, for the page hop."""
    for base in sorted(texts, key=len, reverse=True):
        if name == base:
            return texts[base]
        if name.startswith(base + "-"):
            return f"{texts[base]} Rows with hop = {name[len(base) + 1:]}."
    return ""


def head(run, caption, timing):
    title = f"TLB benchmark run {run.meta.get('run_id') or os.path.basename(run.path)}"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{esc(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{esc(title)}</h1>",
           f'<p class="caption">{"<br>".join(esc(c) for c in caption.split(chr(10)))}</p>']
    if timing:
        out.append(f'<p class="timing">{esc(timing)}</p>')
    return out


def body(sections, figures, notes, texts):
    """The summary's sections, the notes and each figure with its caption."""
    out = ["<h2>Headline numbers</h2><div>"]
    for s in sections:
        out.append(f"<h3>{esc(s.title)}</h3>")
        out.append(f'<p class="src">source: {esc(s.note)}</p>')
        out.append(html_table(s.header, s.rows) if s.rows else "<p>(nothing to compare)</p>")
    out.append("</div>")
    out.append("<h2>Figures</h2>")
    for n in notes:
        out.append(f'<p class="note">note: {esc(n)}</p>')
    for name in figures:
        out.append(f'<figure id="{esc(name)}"><a href="{esc(name)}.png">'
                   f'<img src="{esc(name)}.svg" alt="{esc(name)} figure"></a>'
                   f"<figcaption><b>{esc(name)}</b>: {esc(figure_text(texts, name))} "
                   f'<a href="{esc(name)}.svg">svg</a> · <a href="{esc(name)}.png">png</a>'
                   "</figcaption></figure>")
    return out


def metadata(meta, meta_problem, data_files):
    """meta.json as tables, and the files beside the page."""
    out = ['<h2 id="meta">Run metadata</h2>']
    if meta_problem:
        out.append(f'<p class="note">{esc(meta_problem)}</p>')
    rows = [[k, meta_value(v)] for k, v in meta.items()
            if k not in ("backings", "counters")]
    out.append(html_table(["key", "value"], rows, numeric_from=99))
    if meta.get("counters"):
        rows = [[e, "yes" if c.get("available") else "no", c.get("reason", "")]
                for e, c in meta["counters"].items()]
        out.append("<h3>Hardware counters</h3>")
        out.append(html_table(["event", "available", "reason"], rows, numeric_from=99))
    if meta.get("backings"):
        rows = [[b, c.get("status", ""), c.get("page_kb", ""), c.get("reason", "")]
                for b, c in sorted(meta["backings"].items(), key=lambda kv: order_key(kv[0]))]
        out.append("<h3>Backings</h3>")
        out.append(html_table(["backing", "status", "page_kb", "reason"], rows, numeric_from=99))
    out.append("<p class=\"src\">Data beside this page: "
               + ", ".join(esc(n) for n in data_files + ["meta.json"])
               + ". Redraw one figure by hand with "
               "<code>gnuplot -c plots/FIG.gp results/RUN/DATA.csv OUT</code>.</p>")
    return out


def write_index(run, meta_problem, sections, figures, texts, data_files):
    """texts: {figure: caption}; data_files: the run's CSVs, in page order."""
    out = head(run, run.caption, run.timing) + body(sections, figures, run.notes, texts)
    out += metadata(run.meta, meta_problem, data_files)
    out.append("</body></html>")
    with open(os.path.join(run.path, "index.html"), "w") as f:
        f.write("\n".join(out) + "\n")
