import Foundation
import Testing
import TestSupport

/// Damaged media, as users have it: files with flipped bits, cut short, or with an MP4 box
/// size or a Matroska element size changed, each probed and exported (its first second) by
/// `moonreel` in a process of its own. Every run must end with exit 0 or 1 and at most one
/// short line — never a signal, never a hang. 40 files by default; `MOONREEL_MUTATIONS=500`
/// for the run recorded in the README.
@Suite struct MediaMutationTests {
    static let count = Int(ProcessInfo.processInfo.environment["MOONREEL_MUTATIONS"] ?? "") ?? 40

    static let exportScript = """
        local asset = av.asset(arg[1])
        local comp = av.composition()
        comp:insertTimeRange(av.range(0, math.min(asset.duration, 1)), asset, 0)
        local session = av.exportSession(comp, "LowQuality")
        session.outputURL = arg[2]
        local ok, message = session:export()
        if not ok then error(message, 0) end
        """

    /// Seeds: small generated files of each kind, and the small real ones.
    static func seeds() throws -> [String] {
        var seeds = [try Fixtures.clip(seconds: 1, size: "64x48")]
        let folder = Fixtures.scratchPath("seeds")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, arguments) in [
            ("hevc.mov", ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=1", "-c:v", "libx265", "-x265-params", "log-level=none", "-tag:v", "hvc1"]),
            ("vp9.mkv", ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=1", "-f", "lavfi", "-i", "sine=duration=1",
                         "-c:v", "libvpx-vp9", "-c:a", "libopus", "-shortest"]),
            ("still.png", ["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1"]),
            ("still.jpg", ["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1"]),
        ] {
            try Tool.ffmpeg(["-y"] + arguments + [folder + "/" + name])
            seeds.append(folder + "/" + name)
        }
        for name in ["01_iphone4s_portrait_h264_rot90.mov", "02_iphone14pro_portrait_hevc10_hlg_dovi.MOV",
                     "08_chrome_mediarecorder_vp9_opus_noduration.webm", "11_vp9_odd_161x121.webm",
                     "14_h264_yuv444p_editlist_negpts_noaudio.mp4", "15_aac_editlist_audioonly.mp4",
                     "16_mkv_negative_audio_start_yuv444p.mkv"] {
            seeds.append(Fixtures.real(name))
        }
        return seeds
    }

    enum Outcome: String, CaseIterable {
        case exported = "exit 0", refused = "exit 1 (one line)", other = "other exit", signal = "killed by a signal",
             hang = "no answer in 60 s", untidy = "more than one line"
    }

    @Test func damagedMediaEndsWithOneLineNeverACrash() throws {
        let seeds = try Self.seeds()
        var generator = SplitMix(seed: 0x6D6F_6F6E)
        var table: [String: [Outcome: Int]] = [:]
        var failures: [String] = []
        let folder = Fixtures.scratchPath("mutated")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = folder + "/export.lua"
        try Self.exportScript.write(toFile: script, atomically: true, encoding: .utf8)
        for index in 0..<Self.count {
            let seed = seeds[index % seeds.count]
            let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: seed)))
            let mutation = Mutation.allCases[Int(generator.next() % UInt64(Mutation.allCases.count))]
            let bytes = mutation.apply(to: original, using: &generator)
            let name = "\(index)-\(mutation.rawValue).\((seed as NSString).pathExtension)"
            let path = folder + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let output = folder + "/out-\(index).mp4"
            for command in [["probe", path], ["run", "--quiet", script, path, output]] {
                let outcome = Self.outcome(of: command)
                table[mutation.rawValue, default: [:]][outcome, default: 0] += 1
                if ![.exported, .refused].contains(outcome) {
                    failures.append("\(command[0]) \(name) (from \((seed as NSString).lastPathComponent)): \(outcome.rawValue)")
                }
            }
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: output)
        }
        print(Self.markdown(table))
        #expect(failures.isEmpty, "\(failures.prefix(20).joined(separator: "\n"))")
    }

    static func outcome(of command: [String]) -> Outcome {
        guard let result = try? Tool.run(Moonreel.executable, command, timeout: 60) else { return .hang }
        let lines = result.err.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        switch result.status {
        case 0: return .exported
        case 1: return lines.count == 1 && lines[0].count <= 501 ? .refused : .untidy
        // Foundation reports a death by signal as the signal's number.
        case SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGKILL, SIGSEGV, SIGPIPE, SIGTERM: return .signal
        default: return .other
        }
    }

    /// The table the README's reliability section shows.
    static func markdown(_ table: [String: [Outcome: Int]]) -> String {
        let outcomes = Outcome.allCases
        var lines = ["| mutation | " + outcomes.map(\.rawValue).joined(separator: " | ") + " |",
                     "|---|" + outcomes.map { _ in "---:|" }.joined()]
        for mutation in Mutation.allCases.map(\.rawValue) {
            let counts = table[mutation] ?? [:]
            lines.append("| \(mutation) | " + outcomes.map { "\(counts[$0] ?? 0)" }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}

/// The damage done to a seed.
enum Mutation: String, CaseIterable {
    case bitFlips = "bit flips", truncation, boxSize = "MP4 box size", elementSize = "Matroska element size",
         zeroedRange = "zeroed range"

    func apply(to bytes: [UInt8], using generator: inout SplitMix) -> [UInt8] {
        guard !bytes.isEmpty else { return bytes }
        var bytes = bytes
        func position() -> Int { Int(generator.next() % UInt64(bytes.count)) }
        switch self {
        case .bitFlips:
            for _ in 0..<(1 + Int(generator.next() % 16)) { bytes[position()] ^= 1 << UInt8(generator.next() % 8) }
        case .truncation:
            bytes = Array(bytes.prefix(position()))
        case .zeroedRange:
            let start = position()
            let end = min(bytes.count, start + 1 + Int(generator.next() % 4096))
            for i in start..<end { bytes[i] = 0 }
        case .boxSize:
            // A box's 32-bit size precedes its four-letter type.
            let types = ["moov", "trak", "mdia", "minf", "stbl", "stsz", "stco", "stts", "stsc", "mdhd", "tkhd", "hdlr", "elst", "mdat", "ftyp"]
            let targets = Mutation.offsets(of: types.map { Array($0.utf8) }, in: bytes).filter { $0 >= 4 }
            guard !targets.isEmpty else { return Mutation.bitFlips.apply(to: bytes, using: &generator) }
            let at = targets[Int(generator.next() % UInt64(targets.count))] - 4
            let sizes: [UInt32] = [0, 1, 7, 8, 0xFFFF_FFFF, 0x7FFF_FFFF, UInt32(truncatingIfNeeded: generator.next())]
            let size = sizes[Int(generator.next() % UInt64(sizes.count))]
            for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: size >> (24 - 8 * UInt32(k))) }
        case .elementSize:
            // An EBML element's size (a variable-length integer) follows its ID.
            let ids: [[UInt8]] = [[0x1A, 0x45, 0xDF, 0xA3], [0x18, 0x53, 0x80, 0x67], [0x16, 0x54, 0xAE, 0x6B],
                                  [0x1F, 0x43, 0xB6, 0x75], [0xAE], [0xA3], [0xE7]]
            let targets = Mutation.offsets(of: ids, in: bytes).filter { $0 < bytes.count }
            guard !targets.isEmpty else { return Mutation.bitFlips.apply(to: bytes, using: &generator) }
            let at = targets[Int(generator.next() % UInt64(targets.count))]
            let sizes: [UInt8] = [0x80, 0x81, 0xFF, 0x01, 0x40, 0x08, UInt8(truncatingIfNeeded: generator.next())]
            bytes[at] = sizes[Int(generator.next() % UInt64(sizes.count))]
        }
        return bytes
    }

    /// Offsets just past each occurrence of any of `patterns` (at most 10 000).
    static func offsets(of patterns: [[UInt8]], in bytes: [UInt8]) -> [Int] {
        var found: [Int] = []
        for start in 0..<bytes.count where found.count < 10_000 {
            for pattern in patterns where start + pattern.count <= bytes.count && bytes[start..<start + pattern.count].elementsEqual(pattern) {
                found.append(start + pattern.count)
            }
        }
        return found
    }
}

/// A small, seeded generator: the same files every run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
