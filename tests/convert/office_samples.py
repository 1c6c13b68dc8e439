"""Word, PowerPoint and Excel packages written as raw OOXML in the tests (no binaries
committed): the parts python-docx cannot author (text boxes, content controls, equations,
footnotes, comments, Strict namespaces)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
NAMESPACES = (
    f'xmlns:w="{W_NS}" xmlns:r="{REL}" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)
_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml"
_PARTS = {
    "footnotes": ("footnotes.xml", f"{_MAIN}.footnotes+xml"),
    "endnotes": ("endnotes.xml", f"{_MAIN}.endnotes+xml"),
    "comments": ("comments.xml", f"{_MAIN}.comments+xml"),
}


@dataclass(frozen=True)
class Related:
    """A part the document part relates to: its relationship id and type, name under
    ``word/``, content type and XML."""

    rid: str
    kind: str
    name: str
    content_type: str
    xml: str


def p(text: str) -> str:
    return f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def docx(body: str, related: Sequence[Related] = (), **parts: str) -> bytes:
    """A Word package whose body is ``body`` (XML inside ``w:body``), with the named extra
    parts (``footnotes=``, ``endnotes=``, ``comments=``: their root elements' inner XML) and
    the ``related`` parts the body names by relationship id."""
    overrides = "".join(
        f'<Override PartName="/word/{_PARTS[k][0]}" ContentType="{_PARTS[k][1]}"/>' for k in parts
    ) + "".join(
        f'<Override PartName="/word/{r.name}" ContentType="{r.content_type}"/>' for r in related
    )
    rels = "".join(
        f'<Relationship Id="rId{i}" Type="{REL}/{k}" Target="{_PARTS[k][0]}"/>'
        for i, k in enumerate(parts, 10)
    ) + "".join(f'<Relationship Id="{r.rid}" Type="{r.kind}" Target="{r.name}"/>' for r in related)
    roots = {"footnotes": "footnotes", "endnotes": "endnotes", "comments": "comments"}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.'
            'openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            'ContentType="application/xml"/><Override PartName="/word/document.xml" '
            f'ContentType="{_MAIN}.document.main+xml"/>{overrides}</Types>',
        )
        z.writestr(
            "_rels/.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            f'package/2006/relationships"><Relationship Id="rId1" Type="{REL}/officeDocument" '
            'Target="word/document.xml"/></Relationships>',
        )
        z.writestr(
            "word/_rels/document.xml.rels",
            '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/'
            f'package/2006/relationships">{rels}</Relationships>',
        )
        z.writestr(
            "word/document.xml",
            f'<?xml version="1.0"?><w:document {NAMESPACES}><w:body>{body}</w:body></w:document>',
        )
        for r in related:
            z.writestr(f"word/{r.name}", r.xml)
        for key, inner in parts.items():
            root = roots[key]
            z.writestr(f"word/{_PARTS[key][0]}", f"<w:{root} {NAMESPACES}>{inner}</w:{root}>")
    return out.getvalue()


def strict(package: bytes) -> bytes:
    """``package`` with its namespaces and relationship types as Strict OOXML names them."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith((".xml", ".rels")):
                data = re.sub(
                    rb"http://schemas\.openxmlformats\.org/(?!package/)([A-Za-z]+)/2006/",
                    rb"http://purl.oclc.org/ooxml/\1/",
                    data,
                )
            target.writestr(info, data)
    return out.getvalue()


def encrypted() -> bytes:
    """What an Office file encrypted with a password starts with: an OLE container holding
    the ``EncryptedPackage`` stream (its directory entry's UTF-16 name)."""
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504
    return (
        header
        + "EncryptedInfo".encode("utf-16-le")
        + b"\0" * 100
        + ("EncryptedPackage".encode("utf-16-le") + b"\0" * 400)
    )


def without(package: bytes, member: str) -> bytes:
    """``package`` with ``member`` left out (the parts naming it still do)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            if info.filename != member:
                target.writestr(info, source.read(info))
    return out.getvalue()


def odf(mimetype: str, body: str, *, encrypted: bool = False) -> bytes:
    """An OpenDocument package whose ``office:body`` holds ``body``."""
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
        'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/"'
    )
    crypt = "<manifest:encryption-data/>" if encrypted else ""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("mimetype", mimetype)
        z.writestr(
            "META-INF/manifest.xml",
            '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:'
            f'1.0"><manifest:file-entry manifest:full-path="content.xml">{crypt}'
            "</manifest:file-entry></manifest:manifest>",
        )
        z.writestr(
            "content.xml",
            f'<?xml version="1.0"?><office:document-content {ns}><office:body>{body}'
            "</office:body></office:document-content>",
        )
    return out.getvalue()


_PPT_COMMENTS = "application/vnd.openxmlformats-officedocument.presentationml.comments+xml"
_P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
_P188_NS = "http://schemas.microsoft.com/office/powerpoint/2018/8/main"
_A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _relate(deck: Any, source: Any, name: str, content_type: str, rel: str, xml: str) -> None:
    from pptx.opc.package import Part
    from pptx.opc.packuri import PackURI

    part = Part(PackURI(name), content_type, deck.part.package, xml.encode())
    source.relate_to(part, rel)


def old_pptx_comment(deck: Any, slide: Any, author: str, text: str) -> None:
    """A ``p:cm`` on ``slide`` (anchored to a point only) and its author, id 0."""
    _relate(
        deck, deck.part, "/ppt/commentAuthors.xml",
        "application/vnd.openxmlformats-officedocument.presentationml.commentAuthors+xml",
        f"{REL}/commentAuthors",
        f'<p:cmAuthorLst xmlns:p="{_P_NS}"><p:cmAuthor id="0" name="{author}" initials="A" '
        'lastIdx="1" clrIdx="0"/></p:cmAuthorLst>',
    )  # fmt: skip
    _relate(
        deck, slide.part, "/ppt/comments/comment1.xml", _PPT_COMMENTS, f"{REL}/comments",
        f'<p:cmLst xmlns:p="{_P_NS}"><p:cm authorId="0" idx="1"><p:pos x="0" y="0"/>'
        f"<p:text>{text}</p:text></p:cm></p:cmLst>",
    )  # fmt: skip


def modern_pptx_comment(
    deck: Any, slide: Any, shape_id: int, thread: Sequence[tuple[str, str]]
) -> None:
    """A ``p188:cm`` marking shape ``shape_id`` of ``slide``: ``thread``'s first (author,
    text) the comment, the others its replies; the authors in ``ppt/authors.xml``."""
    names = sorted({a for a, _ in thread})
    authors = "".join(
        f'<p188:author id="{{A{n}}}" name="{a}" initials="A" userId="{a}" providerId="None"/>'
        for n, a in enumerate(names)
    )
    _relate(
        deck, deck.part, "/ppt/authors.xml",
        "application/vnd.ms-powerpoint.authors+xml",
        "http://schemas.microsoft.com/office/2018/10/relationships/authors",
        f'<p188:authorLst xmlns:p188="{_P188_NS}">{authors}</p188:authorLst>',
    )  # fmt: skip

    def body(text: str) -> str:
        return f"<p188:txBody><a:bodyPr/><a:p><a:r><a:t>{text}</a:t></a:r></a:p></p188:txBody>"

    (author, text), replies = thread[0], thread[1:]
    reply_xml = "".join(
        f'<p188:reply id="{{R{n}}}" authorId="{{A{names.index(a)}}}">{body(t)}</p188:reply>'
        for n, (a, t) in enumerate(replies)
    )
    marks = (
        '<ac:deMkLst xmlns:ac="http://schemas.microsoft.com/office/drawing/2013/main/command">'
        '<pc:docMk xmlns:pc="http://schemas.microsoft.com/office/powerpoint/2013/main/command"/>'
        '<pc:sldMk xmlns:pc="http://schemas.microsoft.com/office/powerpoint/2013/main/command" '
        f'cId="0" sldId="256"/><ac:spMk id="{shape_id}" creationId="{{C1}}"/></ac:deMkLst>'
    )
    _relate(
        deck, slide.part, "/ppt/comments/modernComment_1.xml",
        "application/vnd.ms-powerpoint.comments+xml",
        "http://schemas.microsoft.com/office/2018/10/relationships/comments",
        f'<p188:cmLst xmlns:p188="{_P188_NS}" xmlns:a="{_A_NS}"><p188:cm id="{{M1}}" '
        f'authorId="{{A{names.index(author)}}}">{marks}'
        f"<p188:replyLst>{reply_xml}</p188:replyLst>{body(text)}</p188:cm></p188:cmLst>",
    )  # fmt: skip
