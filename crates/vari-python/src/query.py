# Reports the facts vari needs about the interpreter running it, as one JSON object on stdout.
#
# vari runs this once per interpreter (then caches the answer). It must run on every Python that
# may be the target, so it sticks to the standard library and to syntax that Python 2.7 accepts.
# The ABI rules mirror `packaging.tags` (`_cpython_abis`, `_generic_abi`): the interpreter is the
# only one that knows its own build flags.
import json
import os
import platform
import struct
import subprocess
import sys
import sysconfig


def config_var(name):
    return sysconfig.get_config_var(name)


def version_nodot(version):
    return "".join(str(part) for part in version)


def extension_suffixes():
    try:
        from importlib.machinery import EXTENSION_SUFFIXES

        return list(EXTENSION_SUFFIXES)
    except ImportError:  # Python 2
        import imp

        return [suffix for suffix, _, kind in imp.get_suffixes() if kind == imp.C_EXTENSION]


def cpython_abis(py_version):
    abis = []
    version = version_nodot(py_version[:2])
    threading = debug = pymalloc = ucs4 = ""
    with_debug = config_var("Py_DEBUG")
    has_refcount = hasattr(sys, "gettotalrefcount")
    has_ext = "_d.pyd" in extension_suffixes()
    if with_debug or (with_debug is None and (has_refcount or has_ext)):
        debug = "d"
    if py_version >= (3, 13) and config_var("Py_GIL_DISABLED"):
        threading = "t"
    if py_version < (3, 8):
        with_pymalloc = config_var("WITH_PYMALLOC")
        if with_pymalloc or with_pymalloc is None:
            pymalloc = "m"
        if py_version < (3, 3):
            unicode_size = config_var("Py_UNICODE_SIZE")
            if unicode_size == 4 or (unicode_size is None and sys.maxunicode == 0x10FFFF):
                ucs4 = "u"
    elif debug:
        abis.append("cp" + version + threading)
    abis.insert(0, "cp" + version + threading + debug + pymalloc + ucs4)
    return abis


def normalize(text):
    return text.replace(".", "_").replace("-", "_").replace(" ", "_")


def generic_abis():
    ext_suffix = config_var("EXT_SUFFIX") or config_var("SO")
    if not ext_suffix or not ext_suffix.startswith("."):
        return []
    parts = ext_suffix.split(".")
    if len(parts) < 3:
        return cpython_abis(tuple(sys.version_info[:2]))
    soabi = parts[1]
    if soabi.startswith("cpython"):
        abi = "cp" + soabi.split("-")[1]
    elif soabi.startswith("cp"):
        abi = soabi.split("-")[0]
    elif soabi.startswith("pypy"):
        abi = "-".join(soabi.split("-")[:2])
    elif soabi.startswith("graalpy"):
        abi = "-".join(soabi.split("-")[:3])
    elif soabi:
        abi = soabi
    else:
        return []
    return [normalize(abi)]


def full_version(info):
    # PEP 508's format_full_version.
    version = "%d.%d.%d" % (info.major, info.minor, info.micro)
    if info.releaselevel != "final":
        version += info.releaselevel[0] + str(info.serial)
    return version


def glibc_version():
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
        _, version = text.rsplit()
        return version
    except (AttributeError, OSError, ValueError, TypeError):
        pass
    # Older Pythons lack the confstr name: ask the C library the process is linked with.
    try:
        import ctypes

        function = ctypes.CDLL(None).gnu_get_libc_version
        function.restype = ctypes.c_char_p
        return function().decode("ascii")
    except (ImportError, OSError, AttributeError):
        return None


def site_dirs_on_path():
    names = ("site-packages", "dist-packages")
    return [p for p in sys.path if os.path.basename(p) in names and os.path.isdir(p)]


def elf_header(path):
    """(class, machine, flags, interpreter) of an ELF file, or None."""
    try:
        with open(path, "rb") as f:
            ident = f.read(16)
            if ident[:4] != b"\x7fELF":
                return None
            elf_class = bytearray(ident)[4]
            endian = "<" if bytearray(ident)[5] == 1 else ">"
            if elf_class == 1:
                fmt, phfmt = endian + "HHIIIIIHHHHHH", endian + "IIIIIIII"
            else:
                fmt, phfmt = endian + "HHIQQQIHHHHHH", endian + "IIQQQQQQ"
            header = struct.unpack(fmt, f.read(struct.calcsize(fmt)))
            machine, phoff, flags, phentsize, phnum = (
                header[1], header[4], header[6], header[8], header[9])
            interpreter = None
            for index in range(phnum):
                f.seek(phoff + index * phentsize)
                ph = struct.unpack(phfmt, f.read(struct.calcsize(phfmt)))
                if elf_class == 1:
                    kind, offset, size = ph[0], ph[1], ph[4]
                else:
                    kind, offset, size = ph[0], ph[2], ph[5]
                if kind == 3:  # PT_INTERP
                    f.seek(offset)
                    interpreter = f.read(size).rstrip(b"\0").decode("ascii", "replace")
            return {"class": elf_class, "machine": machine, "flags": flags,
                    "interpreter": interpreter}
    except (IOError, OSError, struct.error, ValueError):
        return None


def musl_version(elf):
    loader = elf and elf.get("interpreter")
    if not loader or "musl" not in loader:
        return None
    try:
        proc = subprocess.Popen([loader], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = proc.communicate()
    except OSError:
        return None
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].startswith("musl"):
        return None
    words = lines[1].split()
    if len(words) < 2 or words[0] != "Version":
        return None
    numbers = words[1].split(".")
    try:
        return [int(numbers[0]), int(numbers[1])]
    except (IndexError, ValueError):
        return None


def mac_version():
    release, _, machine = platform.mac_ver()
    if not release:
        return None, machine
    if release.startswith("10.16"):
        # Built against an old SDK, Python reports 10.16 instead of the real version.
        env = dict(os.environ, SYSTEM_VERSION_COMPAT="0")
        proc = subprocess.Popen(
            [sys.executable, "-sS", "-c", "import platform; print(platform.mac_ver()[0])"],
            stdout=subprocess.PIPE, env=env)
        out, _ = proc.communicate()
        release = out.decode("ascii", "replace").strip() or release
    return release, machine


def main():
    info = sys.version_info
    implementation = getattr(sys, "implementation", None)
    impl_name = implementation.name if implementation else "cpython"
    impl_version = full_version(implementation.version) if implementation else full_version(info)
    if impl_name == "cpython":
        abis = cpython_abis(tuple(info[:2]))
    else:
        abis = generic_abis()
    paths = sysconfig.get_paths()
    elf = elf_header(sys.executable) if sys.platform.startswith("linux") else None
    mac_release, mac_machine = mac_version() if sys.platform == "darwin" else (None, None)
    facts = {
        "executable": sys.executable,
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", getattr(sys, "real_prefix", sys.prefix)),
        "version": [info.major, info.minor, info.micro, info.releaselevel, info.serial],
        "implementation_name": impl_name,
        "py_version_nodot": str(config_var("py_version_nodot") or version_nodot(info[:2])),
        "abis": abis,
        "abiflags": getattr(sys, "abiflags", ""),
        "soabi": config_var("SOABI"),
        "gil_disabled": bool(config_var("Py_GIL_DISABLED")),
        "purelib": paths.get("purelib"),
        "platlib": paths.get("platlib"),
        "site_dirs": site_dirs_on_path(),
        "sysconfig_platform": sysconfig.get_platform(),
        "pointer_bits": struct.calcsize("P") * 8,
        "glibc": glibc_version(),
        "musl": musl_version(elf),
        "elf": elf,
        "mac_version": mac_release,
        "mac_machine": mac_machine,
        "markers": {
            "implementation_name": impl_name,
            "implementation_version": impl_version,
            "os_name": os.name,
            "platform_machine": platform.machine(),
            "platform_python_implementation": platform.python_implementation(),
            "platform_release": platform.release(),
            "platform_system": platform.system(),
            "platform_version": platform.version(),
            "python_full_version": platform.python_version(),
            "python_version": ".".join(platform.python_version_tuple()[:2]),
            "sys_platform": sys.platform,
        },
    }
    sys.stdout.write(json.dumps(facts))


main()
