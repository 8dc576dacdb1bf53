# SPDX-License-Identifier: GPL-2.0
"""Drawing a run: render.py (python3 -m plots.render) and the modules it is
split into; benches/: one plot module per benchmark."""
