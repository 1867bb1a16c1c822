import CMoonFFmpeg
import MoonreelPlatform
#if canImport(Glibc)
import Glibc
#endif
import MoonreelComposition
import MoonreelMedia

/// Analyses kept on disk, one small text file each, named by the SHA-256 of the media
/// file's content, the track and the kind of analysis: a second run of a script reads them
/// instead of decoding again, and a changed file (same name, new content) is analysed anew.
/// Writing is best effort: an analysis that cannot be kept is still returned.
public struct AnalysisCache: Sendable {
    /// Where the analyses are kept (made on first use, readable by the user alone).
    public let folder: String

    /// Bumped whenever an analysis method changes what it finds, so old results are not reused
    /// (9: MPEG-TS/PS and MP3 times count from their media).
    static let version = 9

    /// A cache in `folder`.
    public init(folder: String) { self.folder = folder }

    /// `$XDG_CACHE_HOME/moonreel/analysis`, else `~/.cache/moonreel/analysis`; nil with neither set.
    public static var standard: AnalysisCache? { FileDigest.userCacheFolder("analysis").map(AnalysisCache.init(folder:)) }

    /// The audio analysis of `track` (its beats within `tempos` BPM when given), from the
    /// cache or made now (and kept; each tempo range apart).
    public func audio(of track: AssetTrack, tempos: ClosedRange<Double>? = nil, cancellation: CancellationFlag? = nil) throws -> AudioAnalysis {
        let kind = tempos.map { "audio-bpm\($0.lowerBound)-\($0.upperBound)" } ?? "audio"
        return try cached(track, kind: kind) { try AudioAnalysis.analyze(track, tempos: tempos, cancellation: cancellation) }
    }

    /// The scene analysis of `track`, from the cache or made now (and kept).
    public func scenes(of track: AssetTrack, cancellation: CancellationFlag? = nil) throws -> SceneAnalysis {
        try cached(track, kind: "scenes") { try SceneAnalysis.analyze(track, cancellation: cancellation) }
    }

    /// Where the analysis of `kind` of `track` is kept.
    public func path(of track: AssetTrack, kind: String) throws -> String {
        "\(folder)/\(try FileDigest.sha256(of: track.path))-\(track.streamIndex)-\(kind)-v\(Self.version).txt"
    }

    /// The analysis of `track` kept under its content's digest, or `analyze()`'s, kept there
    /// only if the file is still the one hashed: replaced or rewritten between the hashing
    /// and the end of the decoding, the result is returned but not kept, since it may be
    /// the other file's.
    package func cached<Analysis: CacheableAnalysis>(_ track: AssetTrack, kind: String, analyze: () throws -> Analysis) throws -> Analysis {
        let hashed = FileIdentity(path: track.path)
        let file = try path(of: track, kind: kind)
        if let text = try? TextFile.read(file, kind: "analysis cache"), let kept = Analysis(cacheText: text) { return kept }
        let made = try analyze()
        guard let hashed, let now = FileIdentity(path: track.path), now.sameFile(as: hashed, contents: true) else { return made }
        try? Paths.makeFolders(folder, mode: 0o700)
        try? Paths.writeFile(made.cacheText, to: file, replacing: true)
        return made
    }
}

/// An analysis written as lines of `name value value …` (numbers as Swift prints them,
/// which read back exactly).
package protocol CacheableAnalysis {
    var cacheText: String { get }
    init?(cacheText: String)
}

/// The named lines of a cached analysis, each a list of numbers.
private struct CacheLines {
    private var lines: [Substring: [Double]] = [:]

    init?(_ text: String, kind: String) {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard all.first == "moonreel \(kind) analysis", all.last == "end" else { return nil }
        for line in all.dropFirst().dropLast() {
            let fields = line.split(separator: " ")
            guard let name = fields.first else { return nil }
            var numbers: [Double] = []
            for field in fields.dropFirst() {
                guard let number = Double(field), number.isFinite else { return nil }
                numbers.append(number)
            }
            lines[name] = numbers
        }
    }

    subscript(name: Substring) -> [Double]? { lines[name] }

    /// The lines as text; numbers print as Swift prints them (shortest exact form).
    static func text(kind: String, _ lines: [(String, [any LosslessStringConvertible])]) -> String {
        (["moonreel \(kind) analysis"] + lines.map { ([$0.0] + $0.1.map(\.description)).joined(separator: " ") } + ["end"])
            .joined(separator: "\n")
    }
}

extension AudioAnalysis: CacheableAnalysis {
    package var cacheText: String {
        CacheLines.text(kind: "audio", [
            ("tempo", tempo.map { [$0] } ?? []), ("tempoConfidence", [tempoConfidence]), ("beatConfidence", [beatConfidence]),
            ("duration", [duration]),
            ("tempoCandidates", tempoCandidates.flatMap { [$0.bpm, $0.score] }),
            ("beats", beats), ("downbeats", downbeats),
            ("meter", meter.map { [$0] } ?? []), ("meterConfidence", [meterConfidence]), ("onsets", onsets.flatMap { [$0.time, $0.strength] }),
            ("levels", levels), ("loudness", loudness),
        ])
    }

    /// Nil for an entry written before tempo candidates, the meter or the beat confidence were kept (it is analysed again).
    package init?(cacheText: String) {
        guard let lines = CacheLines(cacheText, kind: "audio"), let tempo = lines["tempo"], tempo.count <= 1,
              let candidates = lines["tempoCandidates"], candidates.count % 2 == 0,
              let confidence = lines["tempoConfidence"]?.first, let beatConfidence = lines["beatConfidence"]?.first, let duration = lines["duration"]?.first,
              let beats = lines["beats"], let downbeats = lines["downbeats"],
              let meter = lines["meter"], meter.count <= 1, meter.allSatisfy({ $0 == 3 || $0 == 4 }),
              let meterConfidence = lines["meterConfidence"]?.first, let onsets = lines["onsets"], onsets.count % 2 == 0,
              let levels = lines["levels"], let loudness = lines["loudness"] else { return nil }
        self.init(tempo: tempo.first, tempoConfidence: confidence,
                  tempoCandidates: stride(from: 0, to: candidates.count, by: 2).map { TempoCandidate(bpm: candidates[$0], score: candidates[$0 + 1]) },
                  beatConfidence: beatConfidence, beats: beats, downbeats: downbeats, meter: meter.first.map { Int($0) }, meterConfidence: meterConfidence,
                  onsets: stride(from: 0, to: onsets.count, by: 2).map { Onset(time: onsets[$0], strength: onsets[$0 + 1]) },
                  levels: levels.map(Float.init), loudness: loudness, duration: duration)
    }
}

extension SceneAnalysis: CacheableAnalysis {
    package var cacheText: String {
        CacheLines.text(kind: "scenes", [("frameTimes", frameTimes), ("differences", differences), ("colourChanges", colourChanges),
                                         ("transitions", transitions.flatMap { [$0.time, $0.duration, Self.kindCodes.firstIndex(of: $0.kind).map(Double.init) ?? 0] })])
    }

    /// A transition's kind as a number in the cache: its place here.
    private static let kindCodes = SceneTransition.Kind.allCases

    /// Nil for an entry written before transitions and colour changes were kept (it is analysed again).
    package init?(cacheText: String) {
        guard let lines = CacheLines(cacheText, kind: "scenes"), let times = lines["frameTimes"],
              let differences = lines["differences"], times.count == differences.count,
              let colourChanges = lines["colourChanges"], colourChanges.count == times.count,
              let numbers = lines["transitions"], numbers.count % 3 == 0 else { return nil }
        var transitions: [SceneTransition] = []
        for start in stride(from: 0, to: numbers.count, by: 3) {
            let code = numbers[start + 2]
            guard let index = Int(exactly: code), Self.kindCodes.indices.contains(index) else { return nil }
            transitions.append(SceneTransition(time: numbers[start], duration: numbers[start + 1], kind: Self.kindCodes[index]))
        }
        self.init(frameTimes: times, differences: differences, colourChanges: colourChanges, transitions: transitions)
    }
}
