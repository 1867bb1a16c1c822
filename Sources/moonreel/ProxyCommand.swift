import ArgumentParser
import Foundation
import MoonreelEngine
#if canImport(Glibc)
import Glibc
#endif
import MoonreelPlatform

struct ProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Make the studio's preview proxies of media files ahead of time.",
        discussion: """
            For each video stream larger than the preview or with keyframes more than 2 s apart, a \
            small copy with a keyframe every half second and every frame at its exact time is kept \
            in $XDG_CACHE_HOME/moonreel/proxies (else ~/.cache/moonreel/proxies), named by the \
            file's content. `moonreel studio` makes the ones it needs in the background and previews \
            from them once made; exports never read them. See docs/studio.md.
            """)
    @Option(help: "Preview size the proxies are for: WIDTHxHEIGHT, as `moonreel studio --scale` (default 960x540).")
    var scale = "960x540"
    @Option(help: "The most the proxies folder may hold, in MiB: after a proxy is made the least recently used others go until they fit (default 20480).")
    var cacheLimit: Int = Int(ProxyCache.defaultByteLimit >> 20)
    @Flag(help: "Print nothing but errors.") var quiet = false
    @Argument(help: "Media files.", completion: .file()) var files: [String]

    func validate() throws {
        _ = try StudioCommand.previewSize(scale)
        guard !files.isEmpty else { throw ValidationError("name at least one media file") }
        guard cacheLimit >= 1, cacheLimit <= 1 << 30 else { throw ValidationError("--cache-limit must be 1…1073741824 MiB, got \(cacheLimit)") }
    }

    func run() throws {
        FFmpegLog.capture()
        guard let cache = ProxyCache.standard(previewSize: try StudioCommand.previewSize(scale), byteLimit: Int64(cacheLimit) << 20) else {
            printError("moonreel: proxy: neither XDG_CACHE_HOME nor HOME is set: no cache folder to keep proxies in")
            throw ExitCode(Exit.failed)
        }
        let cancellation = CancellationFlag()
        let signals = SignalWatcher.start { cancellation.cancel() }
        var failed = 0
        // The proxies this run made or found: the cache's limit never removes one of them.
        var used: Set<String> = [], warnedOver = false
        for file in files {
            do {
                try proxies(of: file, in: cache, used: &used, warnedOver: &warnedOver, cancellation: cancellation)
            } catch let error as EngineError where error.kind == .cancelled {
                printError("moonreel: proxy: stopped; \(file) has no proxy (what was made of it is removed)")
                throw ExitCode(Exit.interrupted)
            } catch {
                printError("moonreel: proxy: \(file): \(error)".oneLine)
                failed += 1
            }
        }
        if signals.interrupted { throw ExitCode(Exit.interrupted) }
        if failed > 0 { throw ExitCode(Exit.failed) }
    }

    /// Makes (or finds) the proxy of each of the file's video streams that needs one, adding
    /// it to `used`.
    private func proxies(of file: String, in cache: ProxyCache, used: inout Set<String>, warnedOver: inout Bool, cancellation: CancellationFlag) throws {
        let asset = try Asset(path: file)
        let tracks = asset.tracks.filter { $0.mediaType == .video }
        if tracks.isEmpty, !quiet { print("\(file): no video, no proxy") }
        for track in tracks {
            let name = tracks.count > 1 ? "\(file) (stream \(track.streamIndex))" : file
            let source = ProxyFiles.Source(path: file, streamIndex: track.streamIndex)
            switch cache.need(of: track) {
            case .notNeeded(let reason):
                if !quiet { print("\(name): no proxy needed (\(reason))") }
            case .needed(let reason):
                if let kept = try cache.existing(source) {
                    used.insert(kept)
                    if !quiet { print("\(name): proxy kept at \(kept)") }
                    continue
                }
                let start = ContinuousClock.now
                let made = try cache.make(source, cancellation: cancellation)
                let elapsed = start.duration(to: .now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                let speed = seconds > 0 ? String(format: ", %.1f× real time", track.timeRange.duration.seconds / seconds) : ""
                if !quiet { print(String(format: "%@: proxy made at %@ in %.1f s%@ (%@)", name, made, seconds, speed, reason)) }
                // Only proxies of earlier runs make room: this one's files were all asked for.
                used.insert(made)
                let pruned = cache.prune(keeping: used)
                if pruned.count > 0, !quiet {
                    print("removed \(pruned.count) older prox\(pruned.count == 1 ? "y" : "ies") (\(pruned.bytes >> 20) MiB) to keep \(cache.folder) under \(cacheLimit) MiB")
                }
                if pruned.over > 0, !warnedOver {
                    warnedOver = true
                    printError("moonreel: warning: the proxies of this run pass --cache-limit \(cacheLimit) MiB by \((pruned.over + (1 << 20) - 1) >> 20) MiB; they are kept, and older ones were removed first; raise --cache-limit")
                }
            }
        }
    }
}
