"""QR codes for pairing a phone: printed in the terminal, or written as a PNG.

The code holds the phone page's URL with the credentials in its fragment
(edge_agent.net.webpage.page_url). A phone camera opens it; the page keeps the credentials.
"""
from __future__ import annotations

import io
from pathlib import Path

QR_BORDER_MODULES = 2  # quiet zone around the code; scanners want at least a little
PNG_BOX_PX = 8  # pixels a module in the PNG: about 300-400 px for a pairing URL


class QrError(RuntimeError):
    """The qrcode package is missing, or the PNG could not be written."""


def _code(data: str):
    try:
        import qrcode
    except ImportError as err:
        raise QrError("the qrcode package is missing: pip install qrcode pypng") from err
    code = qrcode.QRCode(border=QR_BORDER_MODULES, box_size=PNG_BOX_PX,
                         error_correction=qrcode.constants.ERROR_CORRECT_M)
    code.add_data(data)
    code.make(fit=True)
    return code


def qr_text(data: str) -> str:
    """The code as terminal text: two modules a character cell (half blocks), dark on light."""
    out = io.StringIO()
    # invert=True draws the light modules as blocks: a dark terminal then shows dark-on-light,
    # which phone scanners read; on a light terminal they read it inverted just as well.
    _code(data).print_ascii(out=out, invert=True)
    return out.getvalue()


def write_qr_png(data: str, path: Path) -> Path:
    """Write the code as a PNG (pure Python: pypng, no Pillow)."""
    from qrcode.image.pure import PyPNGImage

    try:
        image = _code(data).make_image(image_factory=PyPNGImage)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            image.save(fh)
    except (OSError, ImportError) as err:
        raise QrError(f"cannot write the QR code to {path}: {err}") from err
    return path
