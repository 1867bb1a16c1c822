import CMoonLua
import MoonreelEngine
import MoonreelScriptHost

/// `av.makeProxy`: the studio's preview proxies made ahead of time from a script (a batch of
/// rows on one machine or on Slurm makes them like any other job; `moonreel proxy` is the
/// command for a few files).
extension API {
    var proxyFunctions: [AVFunction] {
        [
            ("makeProxy", "av.makeProxy(assetOrPath) → {{stream=, path=, made=, reason=}, …}: the preview proxy of each moving picture of the file that needs one (larger than 1920×1080, keyframes over 2 s apart, or costly to decode), made now or found in the cache (path nil and made false where none is needed; reason says why; a dry run makes nothing); the studio previews from them (docs/studio.md); effects cannot", { call in
                let api = try call.api()
                guard !api.lua.isSandboxed else { throw LuaArgumentError("\(call.functionName): effects cannot read or write files") }
                let media: Asset = try (try? call.object(1, Asset.self)) ?? Asset(path: try call.filePath(1))
                guard let cache = api.policy.proxyCache else {
                    throw call.argumentError(1, "no cache folder for proxies (neither XDG_CACHE_HOME nor HOME is set)")
                }
                var made: [(stream: Int, path: String?, made: Bool, reason: String)] = []
                for track in media.tracks(withMediaType: .video) where !track.isStillImage {
                    let source = ProxyFiles.Source(path: media.path, streamIndex: track.streamIndex)
                    switch cache.need(of: track) {
                    case .notNeeded(let reason):
                        made.append((track.streamIndex, nil, false, reason))
                    case .needed(let reason) where api.policy.dryRun:
                        // A dry run (a batch's check of every row) says where it would be, making nothing.
                        made.append((track.streamIndex, try cache.path(of: source), false, reason))
                    case .needed(let reason):
                        let kept = try cache.existing(source)
                        let path = try kept ?? cache.make(source, cancellation: api.exportCancellation)
                        // A proxy this run made or found earlier stays: its path was handed out.
                        api.proxiesUsed.insert(path)
                        if kept == nil { cache.prune(keeping: api.proxiesUsed) }
                        made.append((track.streamIndex, path, kept == nil, reason))
                    }
                }
                call.pushArray(made) { entry in
                    call.pushRecord {
                        call.push(entry.stream); call.setField("stream")
                        if let path = entry.path { call.push(path); call.setField("path") }
                        call.push(entry.made); call.setField("made")
                        call.push(entry.reason); call.setField("reason")
                    }
                }
                return 1
            }),
        ]
    }
}

extension Binding {
    static let proxy = Binding(functions: { $0.proxyFunctions }, install: { _ in })
}
