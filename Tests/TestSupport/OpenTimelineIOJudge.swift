import Foundation

/// OpenTimelineIO itself (the Academy Software Foundation's library, from PyPI, with its
/// FCPXML and CMX 3600 adapters) as the independent judge of the timelines Moonreel writes.
/// Installed once into a virtual environment under ~/.cache (or $MOONREEL_OTIO_VENV), which
/// tools/install-deps.sh also makes; the versions are pinned so a judgement does not drift.
public enum OpenTimelineIOJudge {
    static let packages = ["opentimelineio==0.18.1", "otio-fcpx-xml-adapter==1.0.0", "otio-cmx3600-adapter==1.0.0"]
    private static let lock = NSLock()

    /// The folder of the virtual environment.
    public static var environment: String {
        ProcessInfo.processInfo.environment["MOONREEL_OTIO_VENV"]
            ?? NSHomeDirectory() + "/.cache/moonreel-tests/otio-0.18.1"
    }

    /// The environment's python, made (python3 -m venv, pip install) the first time.
    public static func python() throws -> String {
        lock.lock(); defer { lock.unlock() }
        let python = environment + "/bin/python"
        let ready = environment + "/.installed"
        if FileManager.default.fileExists(atPath: ready) { return python }
        try? FileManager.default.removeItem(atPath: environment)
        _ = try Tool.run("python3", ["-m", "venv", environment])
        let install = try Tool.run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + packages)
        guard install.status == 0 else { throw Tool.Failure(description: "pip install \(packages.joined(separator: " ")) failed: \(install.err)") }
        FileManager.default.createFile(atPath: ready, contents: Data())
        return python
    }

    /// Runs `code` (Python, with `opentimelineio` imported as `otio` and `sys.argv[1...]` =
    /// `arguments`) and returns what it printed; a failure throws with Python's traceback.
    public static func run(_ code: String, _ arguments: [String] = []) throws -> String {
        let result = try Tool.run(try python(), ["-c", "import sys, json\nimport opentimelineio as otio\n" + code] + arguments)
        guard result.status == 0 else { throw Tool.Failure(description: "OpenTimelineIO: \(result.err)") }
        return result.out
    }
}
