"""Figures as ``data:`` URIs, so the page needs no file beside it."""

from __future__ import annotations

import base64
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from travelgym.report.markup import esc

PLOT_SVG_MAX_BYTES = 1_500_000  # larger SVG figures are embedded as PNG instead (when there is one)
DPI = 110  # every figure a suite writes


def save_figures(figures: dict[str, Any], out: Path,
                 formats: Iterable[str] = ("png",)) -> list[Path]:  # fmt: skip
    """Write each matplotlib figure of ``figures`` (name -> figure) as ``out/NAME.FORMAT`` in
    every one of ``formats``; the paths written, in order."""
    written = []
    for name, fig in figures.items():
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, dpi=DPI, format=fmt)
            written.append(path)
    return written


def figures_html(paths: Iterable[Path]) -> str:
    """One ``figure.plot`` per figure stem (its SVG, or its PNG when the SVG is too big or
    missing), in the order met; ``""`` when there is none."""
    stems: dict[str, dict[str, Path]] = {}
    for path in map(Path, paths):
        stems.setdefault(path.stem, {})[path.suffix.lower()] = path
    figures = []
    for stem, by_suffix in stems.items():
        svg, png = by_suffix.get(".svg"), by_suffix.get(".png")
        if svg is not None and (svg.stat().st_size <= PLOT_SVG_MAX_BYTES or png is None):
            mime, data = "image/svg+xml", svg.read_bytes()
        elif png is not None:
            mime, data = "image/png", png.read_bytes()
        else:
            continue
        uri = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        caption = stem.replace("_", " ").replace("-", " ")
        figures.append(f'<figure class="plot" data-plot="{esc(stem)}"><img alt="{esc(caption)}" '
                       f'src="{uri}"><figcaption>{esc(caption)}</figcaption></figure>')  # fmt: skip
    return f'<div class="plots">{"".join(figures)}</div>' if figures else ""
