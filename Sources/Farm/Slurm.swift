import Foundation
import Synchronization

/// A Slurm command that refused or failed, with what it said (which may run over several
/// lines: a message shows it on one).
public struct SlurmError: Error, CustomStringConvertible {
    /// The command and its answer.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// The Slurm cluster, through its commands: `sbatch` submits a job script, `squeue` says
/// whether a job is still there, `scancel` cancels. It remembers what it submitted, so
/// Ctrl-C can cancel all of it.
public final class Slurm: Sendable {
    private let submitted = Mutex<[String]>([])

    /// A cluster that has submitted nothing yet.
    public init() {}

    /// Writes a job script and submits it (to start once job `after` succeeded, or by
    /// another `dependency` type, if given); its job id.
    public func submit(script: String, job: JobScript, after: String? = nil, dependency: String = "afterok") throws -> String {
        try job.write(to: script)
        let ended = Subprocess.runCommand("sbatch", ["--parsable"] + (after.map { ["--dependency=\(dependency):\($0)"] } ?? []) + [script])
        guard ended.status == 0, let id = ended.output.split(separator: ";").first.map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }), !id.isEmpty else {
            throw SlurmError("sbatch refused \(script): \(ended.errors.isEmpty ? ended.output : ended.errors)")
        }
        submitted.withLock { $0.append(id) }
        return id
    }

    /// Returns once Slurm lists none of the job's tasks (finished, failed or cancelled), or
    /// once it waits for a job that failed (`afterok` never satisfied): then it is cancelled.
    public func waitUntilDone(_ job: String) throws {
        while true {
            let ended = Subprocess.runCommand("squeue", ["--noheader", "--jobs", job, "--format", "%i %r"])
            if ended.status != 0 {
                // squeue forgets finished jobs and then calls the id invalid.
                if ended.errors.contains("Invalid job id") { return }
                throw SlurmError("squeue failed: \(ended.errors)")
            }
            if ended.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return }
            if ended.output.contains("DependencyNeverSatisfied") {
                _ = Subprocess.runCommand("scancel", [job])
                return
            }
            usleep(500_000)
        }
    }

    /// Cancels every job submitted here (Ctrl-C).
    public func cancel() {
        for job in submitted.withLock({ $0 }) { _ = Subprocess.runCommand("scancel", [job]) }
    }
}
