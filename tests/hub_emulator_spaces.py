"""Space repositories for the Hub emulator: what `create_repo(repo_type="space")` and `upload_folder` call.

A Space is a list of commits on `main`, each a full snapshot {path: blob}. Text files travel base64-encoded in
the commit itself ("regular"); binary or large files are uploaded with hf_xet into a write folder first and the
commit names them by sha256 ("lfs"), which the emulator finds in the shard metadata the client uploaded
(hub_emulator_cas). `/spaces/OWNER/NAME/resolve/REV/PATH` serves any file at any commit.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hub_emulator import HubEmulator

ENDPOINTS = (
    "repo-create",
    "validate-yaml",
    "space-info",
    "space-tree",
    "space-preupload",
    "space-xet-write-token",
    "space-commit",
    "space-resolve",
)
LFS_THRESHOLD = 10 * 1024 * 1024  # the Hub stores files over 10 MB, and any binary file, outside git
# The .gitattributes the Hub writes into every new repository (abridged to the patterns that matter here)
# Space card fields checked by validate-yaml (hub-docs, spaces-config-reference.md)
SPACE_SDKS = ("gradio", "streamlit", "docker", "static")
SPACE_COLORS = ("red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray")
SHORT_DESCRIPTION_MAX = 60
DEFAULT_GITATTRIBUTES = "".join(
    f"{pattern} filter=lfs diff=lfs merge=lfs -text\n"
    for pattern in ("*.7z", "*.bin", "*.gz", "*.pkl", "*.tar", "*.tar.*", "*.tgz", "*.wasm", "*.zip", "*.zst")
)


class SpaceRepoError(Exception):
    """An error answer: HTTP status, message and optional X-Error-Code."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Blob:
    """One file version: its bytes (regular) or its xet hash (lfs), with the ids git and LFS give it."""

    size: int
    sha256: str
    git_oid: str
    data: bytes | None = None
    xet_hash: str | None = None

    @property
    def lfs(self) -> bool:
        """Whether the file is stored outside git."""
        return self.xet_hash is not None


@dataclass(frozen=True)
class Commit:
    """A snapshot of the whole repository."""

    oid: str
    parent: str | None
    message: str
    files: dict[str, Blob]
    created_at: float


@dataclass
class Space:
    """A Space repository: its settings and its commits on `main`, oldest first."""

    repo_id: str
    private: bool
    sdk: str
    commits: list[Commit] = field(default_factory=list)

    def at(self, revision: str) -> Commit:
        """The commit `main` or a full commit sha names."""
        if revision == "main":
            return self.commits[-1]
        for commit in self.commits:
            if commit.oid == revision:
                return commit
        raise SpaceRepoError(404, f"Invalid rev id: {revision}", "RevisionNotFound")


def _git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _regular(data: bytes) -> Blob:
    return Blob(len(data), hashlib.sha256(data).hexdigest(), _git_blob_oid(data), data=data)


class SpaceRepos:
    """Every Space of one emulator, and the answers to the Space routes."""

    def __init__(self, emulator: HubEmulator) -> None:
        self._emulator = emulator
        self._lock = threading.Lock()
        self._spaces: dict[str, Space] = {}

    # -- inspection, for tests ------------------------------------------------------------------------------

    def commits(self, repo_id: str) -> list[Commit]:
        """The commits of a Space, oldest first."""
        with self._lock:
            return list(self._spaces[repo_id].commits)

    def read(self, repo_id: str, path: str, revision: str = "main") -> bytes:
        """The bytes of `path` at `revision`."""
        with self._lock:
            blob = self._spaces[repo_id].at(revision).files[path]
        return self._bytes(blob)

    # -- routes ---------------------------------------------------------------------------------------------

    def handle(
        self, endpoint: str, method: str, user: Any, args: dict[str, str], query: dict[str, list[str]], body: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        """Answer one Space route: (status, JSON payload or bytes, headers); errors raise SpaceRepoError."""
        if endpoint == "repo-create":
            return self._create(user, json.loads(body or b"{}"))
        if endpoint == "validate-yaml":
            return self._validate_yaml(json.loads(body or b"{}"))
        repo_id = args["repo_id"]
        if endpoint == "space-resolve":
            return self._resolve(user, repo_id, args["revision"], args["path"], method)
        if endpoint == "space-info":
            return self._info(user, repo_id, args.get("revision", "main"))
        if endpoint == "space-tree":
            return self._tree(user, repo_id, args["revision"], args["path"], query)
        if endpoint == "space-preupload":
            return self._preupload(user, repo_id, args["revision"], json.loads(body or b"{}"))
        if endpoint == "space-commit":
            return self._commit(user, repo_id, args["revision"], body)
        raise SpaceRepoError(404, f"Not Found: {endpoint}")

    def _visible(self, user: Any, repo_id: str) -> Space:
        # Missing and hidden Spaces look the same, so a private Space's existence does not leak.
        space = self._spaces.get(repo_id)
        if space is None or (space.private and not self._emulator._owns(user, repo_id.split("/")[0])):
            raise SpaceRepoError(404 if user else 401, "Repository not found", "RepoNotFound")
        return space

    def writable(self, user: Any, repo_id: str) -> Space:
        """The Space, if `user` may write to it; else SpaceRepoError (or the emulator's own refusal)."""
        with self._lock:
            space = self._visible(user, repo_id)
        self._emulator._require_write(user, repo_id.split("/")[0])
        return space

    def _create(self, user: Any, payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        if payload.get("type") != "space":
            raise SpaceRepoError(400, f"The emulator only creates Spaces, not {payload.get('type') or 'model'}s")
        if payload.get("sdk") not in ("gradio", "streamlit", "docker", "static"):
            raise SpaceRepoError(400, f"Invalid sdk {payload.get('sdk')!r}")
        namespace = payload.get("organization") or (user.name if user else "")
        self._emulator._require_write(user, namespace)
        repo_id = f"{namespace}/{payload['name']}"
        url = f"{self._emulator.url}/spaces/{repo_id}"
        with self._lock:
            if repo_id in self._spaces:
                return 409, {"error": "You already created this space", "url": url}, {}
            space = Space(repo_id, payload.get("visibility") == "private", payload["sdk"])
            files = {".gitattributes": _regular(DEFAULT_GITATTRIBUTES.encode())}
            space.commits.append(self._new_commit(None, "initial commit", files))
            self._spaces[repo_id] = space
        return 200, {"url": url, "name": repo_id}, {}

    @staticmethod
    def _validate_yaml(payload: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        import yaml

        content, errors = payload.get("content", ""), []
        if payload.get("repoType") == "space":
            if not content.startswith("---\n") or "\n---\n" not in content[3:]:
                errors.append("A Space README.md must start with YAML metadata between --- lines")
            else:
                card = yaml.safe_load(content[4 : content.index("\n---\n", 3)]) or {}
                if card.get("sdk") not in SPACE_SDKS:
                    errors.append(f'"sdk" must be one of {", ".join(SPACE_SDKS)}')
                for key in ("colorFrom", "colorTo"):
                    if key in card and card[key] not in SPACE_COLORS:
                        errors.append(f'"{key}" must be one of {", ".join(SPACE_COLORS)}')
                if len(card.get("short_description", "")) > SHORT_DESCRIPTION_MAX:
                    errors.append(f'"short_description" must be at most {SHORT_DESCRIPTION_MAX} characters')
                if "emoji" in card and len(card["emoji"]) != 1:
                    errors.append('"emoji" must be a single emoji')
        return (400 if errors else 200), {"errors": [{"message": e} for e in errors], "warnings": []}, {}

    def _info(self, user: Any, repo_id: str, revision: str) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            space = self._visible(user, repo_id)
            commit = space.at(revision)
        siblings = [{"rfilename": path} for path in sorted(commit.files)]
        modified = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(commit.created_at))
        payload = {"id": repo_id, "author": repo_id.split("/")[0], "sha": commit.oid, "private": space.private}
        return 200, {**payload, "sdk": space.sdk, "lastModified": modified, "siblings": siblings}, {}

    def _tree(
        self, user: Any, repo_id: str, revision: str, prefix: str, query: dict[str, list[str]]
    ) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            commit = self._visible(user, repo_id).at(revision)
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        base = prefix.strip("/")
        entries: dict[str, dict[str, Any]] = {}
        for path, blob in sorted(commit.files.items()):
            if base and not path.startswith(base + "/"):
                continue
            parts = path[len(base) + 1 if base else 0 :].split("/")
            if len(parts) > 1 and not recursive:
                folder = f"{base}/{parts[0]}" if base else parts[0]
                entries[folder] = {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder}
                continue
            entry = {"type": "file", "oid": blob.git_oid, "size": blob.size, "path": path}
            if blob.lfs:
                entry["lfs"] = {"oid": blob.sha256, "size": blob.size, "pointerSize": 134}
                entry["xetHash"] = blob.xet_hash
            entries[path] = entry
        return 200, list(entries.values()), {}

    def _preupload(
        self, user: Any, repo_id: str, revision: str, payload: dict[str, Any]
    ) -> tuple[int, Any, dict[str, str]]:
        space = self.writable(user, repo_id)
        with self._lock:
            commit = space.at(revision)
        attributes = commit.files.get(".gitattributes")
        text = attributes.data.decode() if attributes and attributes.data else ""
        patterns = [line.split()[0] for line in text.splitlines() if "filter=lfs" in line]
        answers = []
        for file in payload["files"]:
            sample = base64.b64decode(file["sample"])
            path = file["path"]
            lfs = file["size"] >= LFS_THRESHOLD or b"\0" in sample or any(fnmatch.fnmatch(path, p) for p in patterns)
            known = commit.files.get(path)
            oid = None if known is None else (known.sha256 if known.lfs else known.git_oid)
            answers.append({"path": path, "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": oid})
        return 200, {"files": answers, "commitOid": commit.oid}, {}

    def _commit(self, user: Any, repo_id: str, revision: str, body: bytes) -> tuple[int, Any, dict[str, str]]:
        if revision != "main":
            raise SpaceRepoError(400, "The emulator only commits to main")
        space = self.writable(user, repo_id)
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            raise SpaceRepoError(400, "The commit payload must start with a header")
        header = lines[0]["value"]
        added: dict[str, Blob] = {}
        deleted: list[tuple[str, bool]] = []
        for line in lines[1:]:
            key, value = line["key"], line["value"]
            if key == "file":
                added[value["path"]] = _regular(base64.b64decode(value["content"]))
            elif key == "lfsFile":
                added[value["path"]] = self._lfs_blob(value["oid"], value.get("size"))
            elif key in ("deletedFile", "deletedFolder"):
                deleted.append((value["path"].rstrip("/"), key == "deletedFolder"))
            else:
                raise SpaceRepoError(400, f"Unknown commit operation {key!r}")
        with self._lock:
            parent = space.commits[-1]
            if header.get("parentCommit") not in (None, parent.oid):
                raise SpaceRepoError(412, "A commit has happened since. Please refresh and try again.")
            files = dict(parent.files)
            for path, folder in deleted:
                doomed = [p for p in files if p == path or (folder and p.startswith(path + "/"))]
                if not doomed:
                    raise SpaceRepoError(404, f"File not found: {path}", "EntryNotFound")
                for doomed_path in doomed:
                    del files[doomed_path]
            files.update(added)
            commit = self._new_commit(parent.oid, header["summary"], files)
            space.commits.append(commit)
        url = f"{self._emulator.url}/spaces/{repo_id}/commit/{commit.oid}"
        return 200, {"success": True, "commitOid": commit.oid, "commitUrl": url, "pullRequestUrl": None}, {}

    def _lfs_blob(self, sha256: str, size: int | None) -> Blob:
        xet_hash = self._emulator._cas.xet_hash_of(sha256)
        if xet_hash is None:
            raise SpaceRepoError(422, f"LFS file {sha256} was never uploaded")
        sizes, errors = self._emulator._cas.import_hashes([xet_hash])
        if xet_hash not in sizes:
            raise SpaceRepoError(422, f"LFS file {sha256}: {errors.get(xet_hash, 'not stored')}")
        if size is not None and sizes[xet_hash] != size:
            raise SpaceRepoError(422, f"LFS file {sha256} has {sizes[xet_hash]} bytes, not {size}")
        # the git oid of an LFS file is that of its pointer file
        pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {sizes[xet_hash]}\n"
        return Blob(sizes[xet_hash], sha256, _git_blob_oid(pointer.encode()), xet_hash=xet_hash)

    def _resolve(
        self, user: Any, repo_id: str, revision: str, path: str, method: str
    ) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            commit = self._visible(user, repo_id).at(revision)
            blob = commit.files.get(path)
        if blob is None:
            raise SpaceRepoError(404, "Entry not found", "EntryNotFound")
        headers = {
            "X-Repo-Commit": commit.oid,
            "ETag": f'"{blob.sha256 if blob.lfs else blob.git_oid}"',
            "Content-Type": "application/octet-stream",
        }
        if blob.lfs:
            headers.update({"X-Linked-Size": str(blob.size), "X-Linked-Etag": f'"{blob.sha256}"'})
        if method == "HEAD":
            return 200, b"", {**headers, "Content-Length": str(blob.size)}
        return 200, self._bytes(blob), headers

    def _bytes(self, blob: Blob) -> bytes:
        if blob.data is not None:
            return blob.data
        assert blob.xet_hash is not None
        return self._emulator._cas.read(blob.xet_hash, blob.size)

    @staticmethod
    def _new_commit(parent: str | None, message: str, files: dict[str, Blob]) -> Commit:
        listing = "\n".join(f"{path} {blob.git_oid}" for path, blob in sorted(files.items()))
        oid = hashlib.sha1(f"{parent}\n{message}\n{time.time_ns()}\n{listing}".encode()).hexdigest()
        return Commit(oid, parent, message, files, time.time())
