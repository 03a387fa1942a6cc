"""The memo behind the cache key's source stamps and installed-distribution lookup (core/stamps.py):
with it or without it the same files give the same stamps, and every change the key must see is seen."""

import os
import sys
import time

import pytest

from mlwarp.core import stamps

OLD_NS = time.time_ns() - 3600 * 10**9  # an hour ago: older than the racy window


@pytest.fixture
def memo(tmp_path, monkeypatch):
    monkeypatch.setattr(stamps, "memo_dir", lambda: str(tmp_path / "memo"))
    monkeypatch.delenv("MLWARP_NO_STAMP_MEMO", raising=False)
    monkeypatch.setattr(stamps, "_memo", None)
    monkeypatch.setattr(stamps, "_save_pending", False)
    monkeypatch.setattr(stamps, "_text_shards", {})
    monkeypatch.setattr(stamps, "_dirty_shards", set())

    def reload():  # this process exits (saving what it learnt), a new one reads the memo files again
        stamps._flush_pending()
        stamps._memo = None
        stamps._text_shards.clear()

    reload.dir = str(tmp_path / "memo")
    return reload


def _write(path, text, mtime_ns=OLD_NS):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _age(*folders):
    for folder in folders:
        os.utime(folder, ns=(OLD_NS, OLD_NS))


def _tree(root):
    _write(root / "a.py", "x = 1\n")
    _write(root / "sub" / "b.py", "y = 2\n")
    _write(root / "sub" / "notes.txt", "not a source\n")
    _write(root / "sub" / "__pycache__" / "b.py", "ignored\n")
    _write(root / "other" / "c.py", "z = 3\n")
    _age(root / "sub" / "__pycache__", root / "sub", root / "other", root)
    return [("pkg", str(root)), ("other", str(root / "other"))]  # `other` is a root of its own


def _expected(root):
    def stamp(label, path):
        st = os.stat(path)
        return f"{label}:{st.st_size}:{st.st_mtime_ns}"

    return sorted([stamp("pkg/a.py", root / "a.py"), stamp("pkg/sub/b.py", root / "sub" / "b.py"),
                   stamp("other/c.py", root / "other" / "c.py")])


def test_stamps_are_every_source_once_with_or_without_the_memo(tmp_path, memo, monkeypatch):
    roots = _tree(tmp_path / "src")
    first = stamps.source_stamps(roots)
    assert first == _expected(tmp_path / "src")
    assert os.listdir(tmp_path / "memo")  # old folders: the memo was written
    memo()
    assert stamps.source_stamps(roots) == first  # from the memo
    monkeypatch.setenv("MLWARP_NO_STAMP_MEMO", "1")
    memo()
    assert stamps.source_stamps(roots) == first  # a walk


def test_an_edit_in_place_changes_the_stamps_through_the_memo(tmp_path, memo):
    root = tmp_path / "src"
    roots = _tree(root)
    before = stamps.source_stamps(roots)
    with open(root / "sub" / "b.py", "a") as f:  # in place: the folder's mtime does not change
        f.write("# edited\n")
    os.utime(root / "sub", ns=(OLD_NS, OLD_NS))
    memo()
    after = stamps.source_stamps(roots)
    assert after != before and after == _expected(root)
    st = os.stat(root / "a.py")  # same size, newer
    os.utime(root / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    memo()
    assert stamps.source_stamps(roots) == _expected(root) != after


def test_a_new_or_removed_file_is_found_although_the_memo_lists_the_old_names(tmp_path, memo):
    root = tmp_path / "src"
    roots = _tree(root)
    stamps.source_stamps(roots)
    (root / "sub" / "new.py").write_text("w = 4\n")  # the folder's mtime moves: the memo is not trusted
    memo()
    found = stamps.source_stamps(roots)
    assert any(s.startswith("pkg/sub/new.py:") for s in found) and len(found) == 4
    os.remove(root / "sub" / "new.py")
    memo()
    assert stamps.source_stamps(roots) == _expected(root)
    (root / "deeper").mkdir()
    (root / "deeper" / "d.py").write_text("v = 5\n")
    memo()
    assert any(s.startswith("pkg/deeper/d.py:") for s in stamps.source_stamps(roots))


def test_recently_changed_folders_are_not_memoised(tmp_path, memo):
    root = tmp_path / "src"
    roots = _tree(root)
    os.utime(root / "sub", ns=(time.time_ns(), time.time_ns()))  # within the racy window
    assert stamps.source_stamps(roots) == _expected(root)
    assert not (tmp_path / "memo").exists()


def test_distributions_are_found_first_on_sys_path_and_new_ones_are_seen(tmp_path, memo, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, version in ((first, "1.0"), (second, "2.0")):
        (folder / f"some_dist-{version}.dist-info").mkdir(parents=True)
    (second / "only.here-3.0.dist-info").mkdir()
    _age(first, second)
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    norm = lambda n: n.lower().replace("_", "-").replace(".", "-")  # noqa: E731
    found = stamps.dist_info_folders(norm)
    assert found == {"some-dist": os.path.join(str(first), "some_dist-1.0.dist-info"),
                     "only-here": os.path.join(str(second), "only.here-3.0.dist-info")}
    memo()
    assert stamps.dist_info_folders(norm) == found  # from the memo
    (tmp_path / "missing").mkdir()  # an entry that did not exist appears, with a distribution
    (tmp_path / "missing" / "newer-5.0.dist-info").mkdir()
    memo()
    assert stamps.dist_info_folders(norm)["newer"] == os.path.join(str(tmp_path / "missing"), "newer-5.0.dist-info")
    os.rmdir(first / "some_dist-1.0.dist-info")  # an uninstall: the next entry's copy is the one
    memo()
    assert stamps.dist_info_folders(norm)["some-dist"] == os.path.join(str(second), "some_dist-2.0.dist-info")


def test_the_memo_keeps_one_set_of_roots_and_this_sys_path_only(tmp_path, memo, monkeypatch):
    import marshal

    for name in ("first_tree", "second_tree"):
        stamps.source_stamps(_tree(tmp_path / name))
    (memo_file,) = os.listdir(tmp_path / "memo")
    with open(tmp_path / "memo" / memo_file, "rb") as f:
        saved = marshal.loads(f.read())
    assert "second_tree" in saved["sources"]["roots"] and "first_tree" not in saved["sources"]["roots"]
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        _age(tmp_path / name)
        monkeypatch.setattr(sys, "path", [str(tmp_path / name)])
        stamps.dist_info_folders(str.lower)
    with open(tmp_path / "memo" / memo_file, "rb") as f:
        assert list(marshal.loads(f.read())["dist-info"]) == [str(tmp_path / "b")]


def test_a_relative_sys_path_entry_is_the_folder_it_names_now(tmp_path, memo, monkeypatch):
    for name in ("here", "there"):
        (tmp_path / name / f"{name}_dist-1.0.dist-info").mkdir(parents=True)
        os.utime(tmp_path / name, ns=(OLD_NS, OLD_NS))  # the same mtime: only the path tells them apart
    monkeypatch.setattr(sys, "path", [""])
    monkeypatch.chdir(tmp_path / "here")
    assert set(stamps.dist_info_folders(str.lower)) == {"here_dist"}
    memo()
    monkeypatch.chdir(tmp_path / "there")
    assert set(stamps.dist_info_folders(str.lower)) == {"there_dist"}


@pytest.mark.parametrize("garbage", [b"not marshal at all", "a str, not a dict",
                                     {"sources": {"roots": None, "files": 3}, "dist-info": {"x": (1,)},
                                      "files": {"p": "q"}}])
def test_a_damaged_memo_is_ignored(tmp_path, memo, garbage):
    import marshal

    roots = _tree(tmp_path / "src")
    stamps.source_stamps(roots)
    (memo_file,) = os.listdir(tmp_path / "memo")
    with open(tmp_path / "memo" / memo_file, "wb") as f:
        f.write(garbage if isinstance(garbage, bytes) else marshal.dumps(garbage))
    memo()
    assert stamps.source_stamps(roots) == _expected(tmp_path / "src")
    (tmp_path / "site" / "d-1.0.dist-info").mkdir(parents=True)
    metadata = tmp_path / "site" / "d-1.0.dist-info" / "METADATA"
    _write(metadata, "Name: d\nVersion: 1.0\n\n")
    assert stamps.per_file(str(metadata), lambda p: open(p).read().split()[3]) == "1.0"


def test_a_memo_of_the_right_roots_with_damaged_entries_is_walked_past(tmp_path, memo):
    import marshal

    roots = _tree(tmp_path / "src")
    stamps.source_stamps(roots)
    (memo_file,) = os.listdir(tmp_path / "memo")
    path = tmp_path / "memo" / memo_file
    with open(path, "rb") as f:
        saved = marshal.loads(f.read())
    for damaged in ([("only a label",)], None, [(1, 2, 3, 4)]):
        saved["sources"]["files"] = damaged
        with open(path, "wb") as f:
            f.write(marshal.dumps(saved))
        memo()
        assert stamps.source_stamps(roots) == _expected(tmp_path / "src")


def test_the_toolchain_comes_from_mlwarps_pins_with_the_memo_and_without(memo, monkeypatch):
    """Read through the memo or not, the compiler extra's pins are found in mlwarp's own metadata (not by
    importlib's slow scan, which must not be needed), and the key's versions are the installed ones."""
    import re
    from importlib import metadata

    import mlwarp as wp

    wp.kernel  # noqa: B018  (loads mlwarp.kernel)
    from mlwarp.kernels import fingerprint as fingerprint_module
    pins = sorted(tuple(re.match(r"([\w.-]+)==([^;\s]+)", r).groups()) for r in metadata.requires("mlwarp")
                  if 'extra == "compiler"' in r)
    installed = sorted((name, metadata.version(name)) for name, _ in pins)

    def refuse():
        raise AssertionError("the toolchain took importlib's scan")

    for _ in range(3):  # the first reads the files, the others the memo
        memo()
        fingerprint_module._toolchain.cache_clear()
        fingerprint_module._dist_info_folders.cache_clear()
        assert sorted(fingerprint_module._compiler_requirements()) == pins
        monkeypatch.setattr(metadata, "packages_distributions", refuse)
        assert list(fingerprint_module._toolchain()) == installed
        monkeypatch.undo()
        monkeypatch.setattr(stamps, "memo_dir", lambda: memo.dir)
    fingerprint_module._toolchain.cache_clear()
    fingerprint_module._dist_info_folders.cache_clear()


def test_memos_of_other_format_versions_are_removed_when_one_is_written(tmp_path, memo):
    (tmp_path / "memo").mkdir()
    py = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    for name in (f"v0-{py}.marshal", f"v{stamps.MEMO_VERSION - 1}-{py}.marshal", "v1-py2.7.marshal", "notes.txt"):
        (tmp_path / "memo" / name).write_bytes(b"old")
    stamps.source_stamps(_tree(tmp_path / "src"))
    assert sorted(os.listdir(tmp_path / "memo")) == sorted([f"v{stamps.MEMO_VERSION}-{py}.marshal",
                                                            "v1-py2.7.marshal", "notes.txt"])


def test_per_text_computes_once_per_text_across_processes(memo):
    calls = []

    def make(value):
        def run():
            calls.append(value)
            return value
        return run

    assert stamps.per_text("facts", "def f(): pass\n", make(["a"])) == ["a"]
    memo()  # a new process reads the memo file
    assert stamps.per_text("facts", "def f(): pass\n", make(["b"])) == ["a"]  # not computed again
    assert stamps.per_text("facts", "def f(): return 1\n", make(["c"])) == ["c"]  # another text: computed
    assert stamps.per_text("other", "def f(): pass\n", make(["d"])) == ["d"]  # sections are separate
    assert calls == [["a"], ["c"], ["d"]]


def test_per_text_values_load_as_untracked_bytes_and_return_fresh_copies(memo):
    # a thousand texts' name lists loaded as lists and tuples made the garbage collector's full collection fall
    # into a warm first launch; kept as marshal bytes, loading the memo adds no object the collector tracks
    import gc

    names = [(["wp", "kernel"], (1, 1)), (["float"], (2, 34))]
    for i in range(50):
        stamps.per_text("facts", f"text {i}", lambda: names)
    memo()
    stamps.per_text("facts", "text 7", lambda: None)  # reads text 7's shard
    section = next(shard for (name, _), shard in stamps._text_shards.items() if name == "facts")
    assert section and not any(gc.is_tracked(v) for v in section.values())
    first = stamps.per_text("facts", "text 7", lambda: None)
    assert first == names
    first[0][0].append("changed")  # a caller's copy: the memo is not changed through it
    assert stamps.per_text("facts", "text 7", lambda: None) == names


def test_per_text_keeps_the_newest_texts(memo, monkeypatch):
    monkeypatch.setattr(stamps, "TEXTS_KEPT", 3)
    monkeypatch.setattr(stamps, "TEXT_SHARDS", 1)
    for i in range(5):
        stamps.per_text("facts", f"text {i}", lambda i=i: i)
    assert stamps.per_text("facts", "text 0", lambda: "again") == "again"  # forgotten: computed again
    assert stamps.per_text("facts", "text 4", lambda: "again") == 4


def test_a_memoised_definition_is_parsed_only_when_its_tree_is_needed(memo, tmp_path, monkeypatch):
    import ast
    import importlib

    from mlwarp.core import source

    (tmp_path / "memo_defs.py").write_text("def scaled(x):\n    return 2.0 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    func = importlib.import_module("memo_defs").scaled
    first = source._read_fast(func, func.__code__)
    assert first.parsed is not None  # checked by parsing, and remembered
    memo()  # a new process
    again = source._read_fast(func, func.__code__)
    assert again.parsed is None and again.text == first.text  # the memo says it defines `scaled`: no parse
    assert ast.dump(again.tree) == ast.dump(first.tree)  # parsed when asked for
    assert again.tree.body[0].name == "scaled"


def test_a_text_that_is_not_the_definition_is_remembered_as_such(memo, tmp_path, monkeypatch):
    import importlib

    from mlwarp.core import source

    (tmp_path / "memo_edited.py").write_text("def scaled(x):\n    return 2.0 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    func = importlib.import_module("memo_edited").scaled
    (tmp_path / "memo_edited.py").write_text("def renamed(x):\n    return 3.0 * x\n")  # edited after import
    os.utime(tmp_path / "memo_edited.py", ns=(OLD_NS, OLD_NS))
    for _ in range(2):  # checked, then from the memo: still not the definition
        assert source._read_fast(func, func.__code__) is None
        memo()


def test_each_checkout_has_its_own_memo():
    """Two checkouts run in turn (a worktree, a CI clone) must not replace each other's memo."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(stamps.__file__)))
    assert os.path.basename(stamps.memo_dir()) == stamps.checkout_tag(here)
    assert os.path.dirname(stamps.memo_dir()) == os.path.join(os.path.expanduser("~"), ".cache", "mlwarp-stamps")
    assert stamps.checkout_tag(here) != stamps.checkout_tag(os.path.join(here, "..", "another-checkout", "mlwarp"))
    assert stamps.checkout_tag(here) == stamps.checkout_tag(here + os.sep)  # the same folder, however spelt


def test_facts_learnt_by_a_process_are_written_once_at_its_exit(memo, monkeypatch):
    writes = []
    real_save = stamps._save_text_shards
    monkeypatch.setattr(stamps, "_save_text_shards", lambda: (writes.append(1), real_save()))
    for i in range(10):
        stamps.per_text("facts", f"text {i}", lambda i=i: i)
    assert writes == []  # nothing written while the program runs
    memo()  # the exit: one write of every fact
    assert writes == [1]
    assert [stamps.per_text("facts", f"text {i}", lambda: "again") for i in range(10)] == list(range(10))


def test_text_facts_live_in_shards_read_only_when_one_of_their_texts_is_asked_for(memo, tmp_path):
    # the one memo file of every program's facts grew to ~500 KB that each warm start read and unmarshalled
    for i in range(40):
        stamps.per_text("facts", f"text {i}", lambda i=i: i)
    stamps.source_stamps(_tree(tmp_path / "src"))  # the main memo written too
    memo()
    py = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    names = sorted(os.listdir(memo.dir))
    shards = [n for n in names if n.startswith(f"texts-v{stamps.MEMO_VERSION}-{py}-facts-")]
    assert 1 < len(shards) <= stamps.TEXT_SHARDS and f"v{stamps.MEMO_VERSION}-{py}.marshal" in names
    import marshal
    with open(os.path.join(memo.dir, f"v{stamps.MEMO_VERSION}-{py}.marshal"), "rb") as f:
        assert "facts" not in marshal.loads(f.read())
    assert stamps.per_text("facts", "text 3", lambda: "again") == 3
    assert list(stamps._text_shards) == [("facts", stamps.hashlib.sha1(b"text 3").digest()[0] % stamps.TEXT_SHARDS)]


def test_text_shards_of_other_format_versions_are_removed_when_one_is_written(memo):
    os.makedirs(memo.dir)
    py = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    old = f"texts-v{stamps.MEMO_VERSION - 1}-{py}-facts-00.marshal"
    other_python = f"texts-v{stamps.MEMO_VERSION - 1}-py2.7-facts-00.marshal"
    for name in (old, other_python):
        with open(os.path.join(memo.dir, name), "wb") as f:
            f.write(b"old")
    stamps.per_text("facts", "text", lambda: 1)
    memo()
    names = os.listdir(memo.dir)
    assert old not in names and other_python in names and len(names) == 2
