#!/usr/bin/env python3
"""Writes eval/extract-scans/: invoices as scans and photos (no text layer), in the case format
of eval/extract-extra (`countersign-cli eval extract --cases eval/extract-scans`). Each is a page
of an eval/extract-pdfs kind drawn as a picture by poppler's pdftoppm, then turned, darkened and
speckled the way a scanner or a phone leaves it, and saved as a scanned PDF (an image on each
page, no text), a PNG or a TIFF. Written after the OCR path and before it was run on them.

Kinds: a clean 200 dpi scan (PDF); a German invoice scanned 1.5° askew with speckles (PDF); a
two-page scan, the table across the break (PDF); a photo-like PNG, 2° askew on a grey ground,
150 dpi; a French invoice as a TIFF. Needs pdftoppm (poppler-utils) to regenerate; otherwise
stdlib only. Deterministic. Run: python3 eval/make_extract_scans.py
"""

import math
import random
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import make_extract_pdfs as pdfs
from make_extract_extra import ROOT, fresh_dir, invoice_case, invoice_pool, pick, write_cases

OUT = ROOT / "eval" / "extract-scans"
SEED = 20261209


def raster(pages, dpi):
    """The pages drawn by pdftoppm as 8-bit grey pictures: (width, height, bytes) each."""
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "in.pdf"
        pdfs.write_pdf(src, pages)
        subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", str(src), str(Path(d) / "p")], check=True)
        out = []
        for f in sorted(Path(d).glob("p*.pgm")):
            data = f.read_bytes()
            parts = data.split(maxsplit=4)  # P5, width, height, maxval, pixels
            out.append((int(parts[1]), int(parts[2]), bytearray(parts[4])))
        return out


def worn(picture, degrees, ground, speckles, rng):
    """Turned by `degrees` about the centre (nearest pixel), paper `ground` grey, speckled."""
    w, h, px = picture
    a = math.radians(degrees)
    ca, sa = math.cos(a), math.sin(a)
    cx, cy = w / 2, h / 2
    out = bytearray([ground]) * (w * h)
    for y in range(h):
        dy = y - cy
        bx, by = cx - dy * sa, cy + dy * ca
        row = y * w
        for x in range(w):
            dx = x - cx
            sx, sy = int(bx + dx * ca), int(by + dx * sa)
            if 0 <= sx < w and 0 <= sy < h:
                v = px[sy * w + sx]
                out[row + x] = v if v < 200 else ground
    for _ in range(speckles):
        out[rng.randrange(w * h)] = rng.choice((0, 60, 120))
    return w, h, out


def write_scan_pdf(path, pictures, dpi):
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None]
    kids = []
    for w, h, px in pictures:
        data = zlib.compress(bytes(px), 9)
        objs.append(f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
                    f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(data)} >>\nstream\n".encode() + data
                    + b"\nendstream")
        image = len(objs)
        pw, ph = w * 72 / dpi, h * 72 / dpi
        content = f"q {pw:.2f} 0 0 {ph:.2f} 0 0 cm /Im1 Do Q".encode()
        objs.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2f} {ph:.2f}] "
                    f"/Resources << /XObject << /Im1 {image} 0 R >> >> /Contents {len(objs)} 0 R >>")
        kids.append(len(objs))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    path.write_bytes(pdfs.pdf_file(objs))


def write_png(path, picture):
    w, h, px = picture
    raw = b"".join(b"\x00" + bytes(px[y * w:(y + 1) * w]) for y in range(h))
    chunk = lambda kind, data: (struct.pack(">I", len(data)) + kind + data  # noqa: E731
                                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def write_tiff(path, picture):
    """Baseline TIFF, 8-bit grey, one uncompressed strip."""
    w, h, px = picture
    entries = [(256, 4, w), (257, 4, h), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, 0), (277, 3, 1),
               (278, 4, h), (279, 4, w * h)]
    ifd_at = 8
    data_at = ifd_at + 2 + 12 * len(entries) + 4
    entries = [(t, k, data_at if t == 273 else v) for t, k, v in entries]
    ifd = struct.pack("<H", len(entries)) + b"".join(
        struct.pack("<HHI", t, k, 1) + (struct.pack("<HH", v, 0) if k == 3 else struct.pack("<I", v))
        for t, k, v in entries) + struct.pack("<I", 0)
    path.write_bytes(b"II*\x00" + struct.pack("<I", ifd_at) + ifd + bytes(px))


# (currency, lines wanted, kind of extract-pdfs, file type, dpi, skew°, ground, speckles)
KINDS = [("EUR", 3, pdfs.positioned, "pdf", 200, 0.0, 255, 0),
         ("EUR", 4, pdfs.german, "pdf", 200, 1.5, 245, 4000),
         ("USD", 6, pdfs.two_pages, "pdf", 200, 0.5, 250, 2000),
         ("USD", 3, pdfs.side_by_side, "png", 150, -2.0, 215, 3000),
         ("EUR", 3, pdfs.french_above, "tiff", 200, 0.7, 240, 1000)]


def main():
    accounts, lines_of, pool = invoice_pool(SEED, ("extract-extra", "extract-layouts", "extract-pdfs"))
    # The wear of each picture: the seed's sequence after the pool's shuffle (as first written).
    rng = random.Random(SEED)
    rng.shuffle([None] * len(pool))
    fresh_dir(OUT)
    cases, used = [], set()
    for cur, want, kind, ext, dpi, skew, ground, speckles in KINDS:
        inv = pick(pool, used, lines_of, want, lambda i: i["currency_code"] == cur)
        acc, lines = accounts[inv["account"]], lines_of[inv["id"]]
        pictures = [worn(p, skew, ground, speckles, rng) for p in raster(kind(inv, acc, lines), dpi)]
        name = f"{inv['number']}.{ext}"
        if ext == "pdf":
            write_scan_pdf(OUT / name, pictures, dpi)
        elif ext == "png":
            write_png(OUT / name, pictures[0])
        else:
            write_tiff(OUT / name, pictures[0])
        cases.append(invoice_case(name, inv, lines, "cara", False, None))
    write_cases(OUT, cases)
    print(f"{len(cases)} documents written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
