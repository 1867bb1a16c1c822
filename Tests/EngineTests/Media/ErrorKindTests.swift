import Foundation
import Testing
import TestSupport
import CMoonAVShim
@testable import MoonreelEngine
@testable import MoonreelMedia

/// Errors say their kind (issue 22 §4): FFmpeg's codes map to the engine's kinds, and opening
/// files reports a missing file, a truncated one and a folder as such.
@Suite struct ErrorKindTests {
    @Test func ffmpegCodesMapToKinds() {
        #expect(FFmpegError.kind(code: -ENOENT, operation: "opening", context: "input \"a.mp4\"") == .notFound)
        #expect(FFmpegError.kind(code: -EIO, operation: "reading", context: "input \"a.mp4\"") == .io)
        #expect(FFmpegError.kind(code: -EACCES, operation: "creating the file", context: "output \"b.mp4\"") == .io)
        #expect(FFmpegError.kind(code: -ENOSPC, operation: "writing", context: "output \"b.mp4\"") == .io)
        #expect(FFmpegError.kind(code: MOON_AVERROR_INVALIDDATA, operation: "decoding", context: "input \"a.mp4\"") == .decode)
        #expect(FFmpegError.kind(code: MOON_AVERROR_EOF, operation: "reading", context: "") == .decode)
        #expect(FFmpegError.kind(code: MOON_AVERROR_INVALIDDATA, operation: "encoding", context: "output") == .encode)
        #expect(FFmpegError.kind(code: MOON_AVERROR_EINVAL, operation: "opening the libx264 encoder", context: "output") == .encode)
        #expect(FFmpegError.kind(code: MOON_AVERROR_EINVAL, operation: "setting up the filters \"x\"", context: "") == .invalidArgument)
        #expect(FFmpegError.kind(code: MOON_AVERROR_ENCODER_NOT_FOUND, operation: "opening", context: "output") == .unsupported)
        #expect(FFmpegError.kind(code: -ENOMEM, operation: "decoding", context: "") == .limit)
        #expect(FFmpegError.kind(code: MOON_AVERROR_EXIT, operation: "reading", context: "") == .cancelled)
        let error = FFmpegError(code: -ENOENT, operation: "opening", context: "input \"a.mp4\"", detail: "")
        #expect(error.kind == .notFound && error.subject == "input \"a.mp4\"")
    }

    @Test func openingFilesSaysWhatIsWrong() throws {
        func kind(_ path: String) -> (EngineError.Kind, String?)? {
            do { _ = try Asset(path: path); return nil } catch let error as EngineError { return (error.kind, error.subject) } catch { return nil }
        }
        #expect(kind("/no/such.mp4")?.0 == .notFound)
        #expect(kind("/no/such.mp4")?.1 == "/no/such.mp4")
        #expect(kind(Fixtures.real("19_truncated_inside_moov.mp4"))?.0 == .decode)
        #expect(kind(Fixtures.real("17_zero_length.webm"))?.0 == .decode)
        #expect(kind(NSTemporaryDirectory())?.0 == .io)
        #expect(EngineError("x").kind == .invalidArgument)
    }
}
