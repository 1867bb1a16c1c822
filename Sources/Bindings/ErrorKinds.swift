import MoonreelEngine
import MoonreelScriptHost
import MoonreelPlatform
#if canImport(Glibc)
import Glibc
#endif

// The Engine's errors tell scripts their kind: a binding that throws one raises the same
// one-line string as ever, and that string answers `err.kind` and `err.subject`.

extension EngineError: KindedError {
    package var errorKindName: String { kind.rawValue }
    package var errorSubject: String? { subject }
    package var scriptMessage: String { message + (remedy?.luaAdvice ?? "") }
}

extension EngineError.Remedy {
    /// The remedy in Lua's terms (the engine says it in plain words).
    var luaAdvice: String {
        switch self {
        case .setRenderSize: " (e.g. vc.renderSize = {1920, 1080}; av.videoComposition(comp) takes it from the composition)"
        case .setFrameDuration: " (e.g. vc.frameDuration = av.time(1, 30))"
        case .makeVideoComposition: " (av.videoComposition(comp) makes them)"
        case .nameTimelineFormat: ", or with format = \"otio\""
        }
    }
}

extension FFmpegError: KindedError {
    package var errorKindName: String { kind.rawValue }
    package var errorSubject: String? { subject }
}

extension TimedTextError: KindedError {
    package var errorKindName: String { kind.rawValue }
    package var errorSubject: String? { file }
}

extension ExportError: KindedError {
    /// The kind of the error that made the export fail (a source that cannot be decoded is
    /// `decode`), else the export's own said as the engine's (`session.errorKind` keeps the
    /// export's).
    package var errorKindName: String { (underlying as? KindedError)?.errorKindName ?? EngineError.Kind(exportKind: kind).rawValue }
    package var errorSubject: String? { subject ?? (underlying as? KindedError)?.errorSubject }
    /// The message with the remedy of the error it wraps said in Lua's terms.
    package var scriptMessage: String {
        guard let remedy = (underlying as? EngineError)?.remedy else { return message }
        return message.replacingAll(remedy.advice, with: remedy.luaAdvice)
    }
}

extension EngineError.Kind {
    /// The engine's kind closest to an export's.
    init(exportKind: ExportError.Kind) {
        switch exportKind {
        case .cancelled: self = .cancelled
        case .invalidRequest: self = .invalidArgument
        case .outputUnavailable, .diskFull: self = .io
        case .renderFailed, .verificationFailed: self = .encode
        case .memoryLimit: self = .limit
        case .strict: self = .strict
        }
    }
}

extension SystemError: KindedError {
    /// A failed system call: a limit when the system is out of a resource (a thread that
    /// cannot start, memory), else input or output (making a folder, syncing a file).
    package var errorKindName: String { (code == EAGAIN || code == ENOMEM ? EngineError.Kind.limit : .io).rawValue }
    package var errorSubject: String? { nil }
}
