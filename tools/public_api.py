"""Reads SwiftPM symbol graphs (one folder, as `swift package dump-symbol-graph` writes them)
and lists every public declaration of the named modules that has no documentation comment
or whose declaration mentions a C type (a Clang symbol) or a raw pointer. Exit status 1 if
there is any."""
import glob
import json
import os
import sys

RAW_POINTERS = {
    "OpaquePointer", "UnsafePointer", "UnsafeMutablePointer", "UnsafeRawPointer",
    "UnsafeMutableRawPointer", "UnsafeBufferPointer", "UnsafeMutableBufferPointer",
    "UnsafeRawBufferPointer", "UnsafeMutableRawBufferPointer", "AutoreleasingUnsafeMutablePointer",
}


def declaration(symbol):
    return "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))


def c_types(symbol):
    """Type names in the declaration that come from C or are raw pointers."""
    found = []
    for fragment in symbol.get("declarationFragments", []):
        if fragment.get("kind") != "typeIdentifier":
            continue
        if fragment.get("preciseIdentifier", "").startswith("c:") or fragment["spelling"] in RAW_POINTERS:
            found.append(fragment["spelling"])
    return found


def place(symbol):
    location = symbol.get("location", {})
    path = location.get("uri", "?").split("/Sources/", 1)[-1]
    line = location.get("position", {}).get("line", -1) + 1
    return f"Sources/{path}:{line}"


def main(folder, modules):
    problems = []
    counted = 0
    for module in modules:
        # Module.symbols.json and Module@Other.symbols.json (extensions of other modules' types).
        files = glob.glob(os.path.join(folder, f"{module}.symbols.json")) + glob.glob(os.path.join(folder, f"{module}@*.symbols.json"))
        if not files:
            problems.append(f"{module}: no symbol graph in {folder}")
        for path in files:
            for symbol in json.load(open(path))["symbols"]:
                counted += 1
                name = ".".join(symbol["pathComponents"])
                if "docComment" not in symbol:
                    problems.append(f"{place(symbol)}: {module}.{name} has no documentation comment")
                bad = c_types(symbol)
                if bad:
                    problems.append(f"{place(symbol)}: {module}.{name} exposes C types ({', '.join(bad)}): {declaration(symbol)}")
    for problem in sorted(problems):
        print(problem)
    print(f"public API check: {counted} public declarations in {', '.join(modules)}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
