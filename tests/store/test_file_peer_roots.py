"""The file peer's own index and answers never reach outside its roots (no broker needed)."""
import json
import os

from edge_agent.config import Settings
from edge_agent.net.events import FileSearchRequest
from edge_agent.net.file_peer import FilePeer
from edge_agent.net.remote_files import answer_file_search
from edge_agent.store.db import connect

SECRET = "root:x:0:0 zebracorn planted"


async def test_a_peer_refuses_symlinks_out_of_its_roots_and_serves_the_rest(tmp_path):
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "passwd").write_text(SECRET, encoding="utf-8")
    real_root = tmp_path / "real-docs"
    real_root.mkdir()
    (real_root / "cv.txt").write_text("Curriculum vitae of Nadia, zebracorn-free", encoding="utf-8")
    os.symlink(outside / "passwd", real_root / "passwd.txt")
    os.symlink(outside, real_root / "etc-link")
    root = tmp_path / "docs"
    os.symlink(real_root, root)  # the configured root is itself a symlink
    conn = await connect(tmp_path / "peer.db")
    try:
        peer = FilePeer(Settings(data_dir=tmp_path / "data"), conn, "laptop", [root])
        await peer.reindex()
        assert peer.files == 1
        for query in ("zebracorn", "passwd root", "../etc/passwd", "curriculum vitae"):
            reply = json.loads(await answer_file_search(conn, "laptop", FileSearchRequest(request_id="s1", query=query)))
            assert all(os.path.realpath(h["path"]).startswith(str(real_root)) for h in reply["hits"]), query
            assert not any("planted" in h["excerpt"] for h in reply["hits"]), query
        reply = json.loads(await answer_file_search(conn, "laptop", FileSearchRequest(request_id="s2", query="vitae")))
        assert [h["name"] for h in reply["hits"]] == ["cv.txt"]
    finally:
        await conn.close()
