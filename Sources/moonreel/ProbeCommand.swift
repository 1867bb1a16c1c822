import ArgumentParser
import MoonreelEngine

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the engine sees in a media file.")
    @Argument(help: "A media file.", completion: .file()) var file: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        FFmpegLog.capture()
        do {
            let asset = try Asset(path: file)
            print(json ? ProbeReport.json(asset) : ProbeReport.text(asset))
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
    }
}
