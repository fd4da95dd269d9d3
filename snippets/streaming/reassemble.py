"""Putting streamed text back together: the right way and two wrong ones."""

import codecs


def by_concatenation(contents: list) -> str:
    """Right: join the strings the server sent (it already decoded whole characters)."""
    return "".join(c for c in contents if c)


def by_incremental_decoder(pieces: list[bytes]) -> str:
    """Right, for raw bytes: an incremental decoder keeps a split character until its last byte arrives."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    return "".join(decoder.decode(p) for p in pieces) + decoder.decode(b"", final=True)


def by_decoding_each_piece(pieces: list[bytes]) -> str:
    """Wrong: decoding every piece on its own breaks a character whose bytes straddle two pieces."""
    return "".join(p.decode("utf-8", errors="replace") for p in pieces)
