#if canImport(Glibc)
import Glibc
#endif

/// An error of the engine about the user's input, worded for the user.
///
/// Thrown for bad input that FFmpeg did not report itself: an unreadable image, a range
/// outside an asset, a size over the limits, a file with no audio or video. Its ``kind``
/// says what an app or script can do about it; its ``subject`` names the file, property or
/// input concerned, when there is one.
public struct EngineError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is, for code that reacts to it (scripts read it as `err.kind`).
    public enum Kind: String, Sendable, CaseIterable {
        /// A value or setting the caller passed is wrong (out of range, unknown name, wrong shape).
        case invalidArgument
        /// A valid request this build, format or codec cannot do.
        case unsupported
        /// A file, stream or track that is not there.
        case notFound
        /// Reading or writing files and folders failed: permissions, a missing folder, a full disk.
        case io
        /// A file's data cannot be read or decoded: broken, truncated, not media.
        case decode
        /// An encoder or muxer failed.
        case encode
        /// A memory, size, time or count limit was reached.
        case limit
        /// The work was cancelled.
        case cancelled
        /// Strict mode was on and the work reported a warning (something dropped, cut or
        /// guessed): the result would not have been what was asked.
        case strict
        /// An engine invariant did not hold (a bug in Moonreel, not in the input).
        case `internal`
    }

    /// What went wrong, one line, naming the input: `image "logo.png": not an image (…)`.
    public let message: String
    /// What kind of failure this is.
    public let kind: Kind
    /// The file path, property or input the message names, when there is one.
    public let subject: String?
    /// The error this one reports, when it wraps another (a library's copy that cannot be
    /// reopened: the `FFmpegError` that said why).
    public let underlying: (any Error)?
    /// The change that makes the request work, when there is one to name: front ends say it
    /// in their own terms (``description`` in plain words, the Lua bindings in Lua's).
    public let remedy: Remedy?

    /// Changes that make a refused request work, named rather than worded.
    public enum Remedy: String, Sendable, CaseIterable {
        /// Give the video composition a render size, or make it from the composition.
        case setRenderSize
        /// Give the video composition a frame duration.
        case setFrameDuration
        /// Make the video composition from the composition: that gives it its instructions.
        case makeVideoComposition
        /// Name the timeline file's format.
        case nameTimelineFormat

        /// The remedy in plain words, as it ends ``EngineError/description``.
        public var advice: String {
            switch self {
            case .setRenderSize: " (e.g. 1920×1080; a video composition made from the composition takes its size)"
            case .setFrameDuration: " (e.g. 1/30 s)"
            case .makeVideoComposition: " (a video composition made from the composition has them)"
            case .nameTimelineFormat: ", or name the format (otio, fcpxml or edl)"
            }
        }
    }

    /// An error with the given message, of `kind` (a wrong argument unless said), about
    /// `subject`, reporting `underlying`, curable by `remedy`.
    public init(_ message: String, kind: Kind = .invalidArgument, subject: String? = nil, underlying: (any Error)? = nil,
                remedy: Remedy? = nil) {
        self.message = message
        self.kind = kind
        self.subject = subject
        self.underlying = underlying
        self.remedy = remedy
    }

    /// The message, and the remedy in plain words.
    public var description: String { message + (remedy?.advice ?? "") }
}

extension EngineError: Equatable {
    /// Two errors are the same when they say the same of the same subject, of the same
    /// kind, with the same remedy (what each wraps is not compared).
    public static func == (a: EngineError, b: EngineError) -> Bool {
        a.message == b.message && a.kind == b.kind && a.subject == b.subject && a.remedy == b.remedy
    }
}

/// Why an export failed: a kind an embedder can act on, and the one-line message for people.
public struct ExportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong, in terms an app can act on (retry, ask for another path, free space…).
    public enum Kind: String, Sendable, CaseIterable {
        /// `cancel()`, or the host's interrupt.
        case cancelled
        /// The settings or the composition ask for something that cannot be exported (no
        /// outputURL, an unknown file type, an empty composition, a range outside it).
        case invalidRequest
        /// The output path cannot be used: it exists and overwrite is off, it is one of the
        /// run's inputs, its folder is missing or read-only, or a file appeared there while
        /// exporting. Nothing was replaced.
        case outputUnavailable
        /// The disk filled up; nothing was replaced.
        case diskFull
        /// Reading, decoding, composing, encoding or writing failed.
        case renderFailed
        /// The finished file did not read back as expected; nothing was replaced.
        case verificationFailed
        /// The export needed more memory than `ExportSession.memoryLimit`; nothing was replaced.
        case memoryLimit
        /// `strict` was on and the export reported a warning; nothing was replaced (its
        /// `diagnostics` say what).
        case strict

        /// Runs `body`, giving any error it throws this kind (an `ExportError` keeps its own).
        package func tag<T>(_ body: () throws -> T) throws -> T {
            do { return try body() } catch { throw ExportError.wrapping(error, as: self) }
        }
    }

    /// What went wrong.
    public let kind: Kind
    /// One line for people, naming the setting, file or time concerned.
    public let message: String
    /// The error that made the export fail, when it was not the export's own: a source that
    /// cannot be decoded is a `renderFailed` export over an `FFmpegError` of kind `decode`,
    /// and scripts read that kind (`err.kind == "decode"`), not the export's.
    public let underlying: (any Error)?
    /// The file or input the failure concerns when the export knows it better than the error
    /// it wraps (the output, where an encoder named its temporary file); nil: the wrapped one's.
    public let subject: String?

    /// An error of `kind` with `message`, caused by `underlying` when there is one, about `subject`.
    public init(_ kind: Kind, _ message: String, underlying: (any Error)? = nil, subject: String? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
        self.subject = subject
    }

    /// `error` as an export's failure: an `ExportError` as it is, any other as one of `kind`
    /// with its message, and kept as the underlying error.
    public static func wrapping(_ error: any Error, as kind: Kind) -> ExportError {
        error as? ExportError ?? ExportError(kind, "\(error)", underlying: error)
    }

    public var description: String { message }
}
