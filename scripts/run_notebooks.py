#!/usr/bin/python3
"""Executes notebooks headless through the tslab kernel and checks what they produced.

Usage: /usr/bin/python3 scripts/run_notebooks.py [--update] [--shots DIR] notebooks/*.ipynb

Each notebook runs top to bottom in its own folder (so `import ... from "typelm"` resolves through
node_modules/typelm) and the executed copy is written to a temporary folder; the source is left
alone unless --update is given (then the outputs are saved back, for committing). A notebook fails
when a cell errors, when a cell writes a traceback or compiler error to stderr, or when a chart cell
(one that calls display.metrics / display.candidates / display.confusion) did not produce both
vega-lite and a PNG. Notebooks with charts are exported to HTML and screenshotted with headless
Chromium; the screenshot must show chart pixels. Ends with the line "N passed, N failed".
Needs Debian's Jupyter (/usr/bin/python3 with nbclient) and JUPYTER_PATH pointing at the tslab spec.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

CHART_CALL = re.compile(r"display\.(metrics|candidates|confusion)\s*\(")
VEGALITE = "application/vnd.vegalite.v5+json"
# stderr text that means the cell failed: tslab's compiler errors ("1:7 - ...") and thrown errors.
STDERR_FAILURE = re.compile(r"(^\d+:\d+ - )|Error\b|^\s+at .+\(|Traceback", re.M)
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--window-size=1100,7000",
]


def stderr_of(cell):
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr")


def is_chart_cell(cell):
    src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
    return cell.cell_type == "code" and (CHART_CALL.search(src) or "chart" in cell.get("metadata", {}).get("tags", []))


def check_cell(index, cell):
    """Problems with one executed code cell (empty when it is fine)."""
    problems = []
    err = stderr_of(cell)
    if STDERR_FAILURE.search(err):
        problems.append(f"cell {index} wrote an error to stderr:\n{err.rstrip()}")
    for o in cell.get("outputs", []):
        if o.get("output_type") == "error":
            problems.append(f"cell {index} raised {o.get('ename')}: {o.get('evalue')}")
    if is_chart_cell(cell):
        bundles = [o.get("data", {}) for o in cell.get("outputs", []) if o.get("output_type") == "display_data"]
        if not any(VEGALITE in b and "image/png" in b for b in bundles):
            kinds = [sorted(b) for b in bundles]
            problems.append(f"cell {index} draws a chart but produced no display with vega-lite and image/png (got {kinds})")
    return problems


def run_notebook(path, out_dir, timeout):
    # tslab's kernel sometimes fails to answer its first kernel_info request (zeromq: "Socket is blocked
    # by a bind or unbind operation"), before any cell runs; such a start is tried once more. A kernel
    # that fails again, or any failure once a cell has run, fails the notebook.
    nb, out, problems, seconds, cells_run = run_notebook_once(path, out_dir, timeout)
    if problems and cells_run == 0 and problems[0].startswith("kernel error"):
        print(f"     {path}: the kernel did not start ({problems[0]}); starting it once more")
        nb, out, problems, seconds, cells_run = run_notebook_once(path, out_dir, timeout)
    return nb, out, problems, seconds


def run_notebook_once(path, out_dir, timeout):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="tslab", resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
    problems = []
    cells_run = 0
    started = time.time()
    try:
        with client.setup_kernel():
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                cells_run += 1
                try:
                    client.execute_cell(cell, index)
                except (CellExecutionError, CellTimeoutError, DeadKernelError) as e:
                    detail = stderr_of(cell).rstrip() or str(e).strip() or type(e).__name__
                    problems.append(f"cell {index} failed:\n{detail}")
                    break
                problems.extend(check_cell(index, cell))
                if problems:
                    break
    except Exception as e:  # a kernel that does not start is a failure of this notebook, not of the runner
        problems.append(f"kernel error: {type(e).__name__}: {e}")
    out = os.path.join(out_dir, os.path.basename(path))
    nbformat.write(nb, out)
    return nb, out, problems, time.time() - started, cells_run


def decode_png(data):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, f"unsupported PNG (depth {depth}, colour type {color})"
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


# Drawn around every chart image before the screenshot, so the charts can be found in it.
OUTLINE_CSS = "<style>.typelm-chart img { outline: 4px solid #ff00ff; outline-offset: 2px; }</style>"


def chart_boxes(png_path):
    """Per chart outline found in the screenshot: (box, non-white share inside, distinct colours inside)."""
    width, height, bpp, rows = decode_png(open(png_path, "rb").read())
    pink = []
    for y in range(0, height, 2):
        line = rows[y]
        for x in range(0, width, 2):
            o = x * bpp
            if line[o] > 230 and line[o + 1] < 40 and line[o + 2] > 230:
                pink.append((x, y))
    boxes = []
    for x, y in sorted(pink, key=lambda p: p[1]):
        if boxes and y - boxes[-1][3] <= 12:
            b = boxes[-1]
            boxes[-1] = [min(b[0], x), b[1], max(b[2], x), y]
        else:
            boxes.append([x, y, x, y])
    found = []
    for x0, y0, x1, y1 in boxes:
        inside = [(x, y) for y in range(y0 + 8, y1 - 7, 2) for x in range(x0 + 8, x1 - 7, 2)]
        colours, ink = set(), 0
        for x, y in inside:
            o = x * bpp
            r, g, b = rows[y][o], rows[y][o + 1], rows[y][o + 2]
            colours.add((r >> 4, g >> 4, b >> 4))
            ink += (r, g, b) != (255, 255, 255)
        found.append(((x0, y0, x1, y1), ink / max(1, len(inside)), len(colours)))
    return width, height, found


def screenshot(executed, shots_dir, charts):
    """HTML export (code hidden) with chart outlines, a Chromium screenshot, and a check of every chart area."""
    name = os.path.splitext(os.path.basename(executed))[0]
    subprocess.run(["/usr/bin/jupyter-nbconvert", "--to", "html", "--no-input", "--log-level=ERROR", executed, "--output-dir", shots_dir],
                   check=True, capture_output=True)
    html = os.path.join(shots_dir, name + ".html")
    text = open(html, encoding="utf-8").read()
    open(html, "w", encoding="utf-8").write(text.replace("</head>", OUTLINE_CSS + "</head>", 1))
    png = os.path.join(shots_dir, name + ".png")
    profile = tempfile.mkdtemp(prefix="chromium-")
    try:
        subprocess.run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}", "file://" + html],
                       check=True, capture_output=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    width, height, boxes = chart_boxes(png)
    print(f"  screenshot {png}: {width}x{height}, {len(boxes)} of {charts} charts found")
    problems = []
    for box, ink, colours in boxes:
        print(f"    chart at {box}: {ink:.0%} drawn, {colours} colours")
        # A chart is at least 200x100 CSS pixels; a broken image shows only its small alt-text box.
        if ink < 0.03 or colours < 4 or box[2] - box[0] < 200 or box[3] - box[1] < 100:
            problems.append(f"the chart area {box} of {png} is blank or broken ({ink:.1%} non-white, {colours} colours)")
    if len(boxes) < charts:
        problems.append(f"{png} shows {len(boxes)} chart areas, expected {charts} (window {width}x{height}: a chart below it is not checked)")
    return problems


def start_redis():
    """A throwaway redis-server on a free loopback port for the memory notebook (None without the binary)."""
    binary = shutil.which("redis-server")
    if not binary or os.environ.get("REDIS_URL"):
        return None
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{port}"
    print(f"redis-server on 127.0.0.1:{port} (REDIS_URL) for the notebooks")
    return proc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("notebooks", nargs="+")
    parser.add_argument("--update", action="store_true", help="save the executed notebooks over the sources")
    parser.add_argument("--shots", help="folder for HTML exports and screenshots (default: the temporary folder)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell")
    args = parser.parse_args()
    if not os.environ.get("JUPYTER_PATH"):
        os.environ["JUPYTER_PATH"] = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".jupyter", "share", "jupyter")
    out_dir = tempfile.mkdtemp(prefix="typelm-notebooks-")
    shots = args.shots or out_dir
    os.makedirs(shots, exist_ok=True)
    redis = start_redis()
    try:
        failed_paths = run_all(args, out_dir, shots)
    finally:
        if redis:
            redis.terminate()
            redis.wait(timeout=10)
    passed, failed = len(args.notebooks) - len(failed_paths), len(failed_paths)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def run_all(args, out_dir, shots):
    failed = []
    for path in args.notebooks:
        nb, executed, problems, seconds = run_notebook(path, out_dir, args.timeout)
        charts = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                     if o.get("output_type") == "display_data" and "image/png" in o.get("data", {}))
        if not problems and charts:
            if shutil.which("chromium"):
                problems.extend(screenshot(executed, shots, charts))
            else:
                problems.append("chromium is missing (apt-get install -y --no-install-recommends chromium): cannot check the charts' screenshot")
        if problems:
            failed.append(path)
            print(f"FAIL {path} ({seconds:.1f} s)")
            for p in problems:
                print("  " + p.replace("\n", "\n    "))
        else:
            print(f"ok   {path} ({seconds:.1f} s, {charts} charts) -> {executed}")
            if args.update:
                for cell in nb.cells:
                    if cell.cell_type == "code":
                        cell.execution_count = None
                nbformat.write(nb, path)
    return failed


if __name__ == "__main__":
    main()
