import ArgumentParser
import MoonreelEngine
import MoonreelPlatform

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a test clip with FFmpeg's generators and run the bundled demo script on it.")
    @OptionGroup var common: CommonOptions
    @Option(help: "Folder for the demo's files.") var output: String = "moonreel-demo"

    func run() throws {
        do { try Paths.makeFolders(output) } catch {
            printError("moonreel: demo: \(error)")
            throw ExitCode(Exit.failed)
        }
        let clip = output + "/test-pattern.mp4"
        if !common.quiet { printError("moonreel: making \(clip) (colour bars, moving counter, 440 Hz tone)") }
        do {
            try TestPattern.write(to: clip, seconds: 8, width: 1280, height: 720)
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
        try ScriptSession(common).runBundled(BundledScripts.demo, name: "demo.lua", arguments: [clip, output])
    }
}
