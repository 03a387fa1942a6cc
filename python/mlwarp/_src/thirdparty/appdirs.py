"""`warp._src.thirdparty.appdirs`: the per-user directories of an application, as the `appdirs` package
(1.4.4, which Warp vendors) defines them. Newton asks it where to cache its downloaded assets.

Linux and the other POSIX systems follow the XDG base directory specification (`$XDG_CACHE_HOME`, ...,
else the `~/.cache`-style default); macOS uses `~/Library/...`; Windows the local or roaming application data
folder (`%LOCALAPPDATA%`, `%APPDATA%`) with `<appauthor>\\<appname>` under it.
"""

import os
import sys


def _system() -> str:
    return "win32" if sys.platform == "win32" else "darwin" if sys.platform == "darwin" else "posix"


def _windows_dir(roaming: bool, appname, appauthor) -> str:
    root = os.environ.get("APPDATA" if roaming else "LOCALAPPDATA") or os.path.expanduser("~")
    path = os.path.normpath(root)
    if appname:
        author = appname if appauthor is None else appauthor
        path = os.path.join(path, author, appname) if author is not False else os.path.join(path, appname)
    return path


def _with_version(path: str, appname, version) -> str:
    return os.path.join(path, version) if appname and version else path


def _posix_dir(variable: str, default: str, appname) -> str:
    path = os.getenv(variable, os.path.expanduser(default))
    return os.path.join(path, appname) if appname else path


def user_data_dir(appname=None, appauthor=None, version=None, roaming=False) -> str:
    """The directory for the user's data files of `appname` (XDG_DATA_HOME, `~/.local/share`)."""
    system = _system()
    if system == "win32":
        path = _windows_dir(roaming, appname, appauthor)
    elif system == "darwin":
        path = os.path.expanduser("~/Library/Application Support")
        path = os.path.join(path, appname) if appname else path
    else:
        path = _posix_dir("XDG_DATA_HOME", "~/.local/share", appname)
    return _with_version(path, appname, version)


def user_config_dir(appname=None, appauthor=None, version=None, roaming=False) -> str:
    """The directory for the user's configuration of `appname` (XDG_CONFIG_HOME, `~/.config`); on Windows and
    macOS the data directory, as in appdirs."""
    if _system() != "posix":
        return _with_version(user_data_dir(appname, appauthor, None, roaming), appname, version)
    return _with_version(_posix_dir("XDG_CONFIG_HOME", "~/.config", appname), appname, version)


def user_cache_dir(appname=None, appauthor=None, version=None, opinion=True) -> str:
    """The directory for the user's cache of `appname` (XDG_CACHE_HOME, `~/.cache`; `~/Library/Caches`; on
    Windows `%LOCALAPPDATA%\\<appauthor>\\<appname>\\Cache`, the `Cache` left out with `opinion=False`)."""
    system = _system()
    if system == "win32":
        path = _windows_dir(False, appname, appauthor)
        if appname and opinion:
            path = os.path.join(path, "Cache")
    elif system == "darwin":
        path = os.path.expanduser("~/Library/Caches")
        path = os.path.join(path, appname) if appname else path
    else:
        path = _posix_dir("XDG_CACHE_HOME", "~/.cache", appname)
    return _with_version(path, appname, version)
