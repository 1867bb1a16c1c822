import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real single-node Slurm cluster for a test: Debian's munged, slurmctld and slurmd, with
/// their key, configuration, state, spool and logs in a folder of the test run's (removed
/// with it) and loopback ports of their own. `environment` points Slurm's commands at it
/// (SLURM_CONF). `stop()` ends every daemon it started, by PID.
public final class SlurmCluster: @unchecked Sendable {
    public let folder: String
    public let configuration: String
    public var environment: [String: String] { ["SLURM_CONF": configuration] }

    public init() throws {
        for program in ["munged", "slurmctld", "slurmd", "sbatch", "squeue"] where !Self.installed(program) {
            throw Tool.Failure(description: "\(program) is not installed: tools/install-deps.sh installs Slurm and munge")
        }
        folder = Fixtures.runDirectory + "/slurm-\(UUID().uuidString.prefix(8))"
        configuration = folder + "/slurm.conf"
        for sub in ["state", "spool", "log", "munge"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        chmod(folder + "/munge", 0o700)
        var key = [UInt8](repeating: 0, count: 1024)
        for index in key.indices { key[index] = UInt8.random(in: .min ... .max) }
        guard FileManager.default.createFile(atPath: folder + "/munge/munge.key", contents: Data(key), attributes: [.posixPermissions: 0o400]) else {
            throw Tool.Failure(description: "cannot write the test cluster's munge key in \(folder)/munge")
        }
        let socket = folder + "/munge/munge.socket"
        try start("/usr/sbin/munged", ["--force", "--socket=\(socket)", "--key-file=\(folder)/munge/munge.key",
                                                     "--log-file=\(folder)/log/munged.log", "--pid-file=\(folder)/munge/munged.pid",
                                          "--seed-file=\(folder)/munge/seed"])
        let host = Self.shortHostName()
        let (controllerPort, nodePort) = (Self.freePort(), Self.freePort())
        try """
            ClusterName=moonreel-test
            SlurmctldHost=\(host)(127.0.0.1)
            SlurmctldPort=\(controllerPort)
            SlurmdPort=\(nodePort)
            SlurmUser=root
            SlurmdUser=root
            AuthType=auth/munge
            AuthInfo=socket=\(socket)
            CredType=cred/munge
            StateSaveLocation=\(folder)/state
            SlurmdSpoolDir=\(folder)/spool
            SlurmctldPidFile=\(folder)/slurmctld.pid
            SlurmdPidFile=\(folder)/slurmd.pid
            SlurmctldLogFile=\(folder)/log/slurmctld.log
            SlurmdLogFile=\(folder)/log/slurmd.log
            ProctrackType=proctrack/linuxproc
            TaskPlugin=task/none
            JobAcctGatherType=jobacct_gather/none
            AccountingStorageType=accounting_storage/none
            SchedulerType=sched/builtin
            SelectType=select/cons_tres
            SelectTypeParameters=CR_CPU
            ReturnToService=2
            MpiDefault=none
            KillWait=2
            MaxArraySize=1001
            NodeName=\(host) NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
            PartitionName=test Nodes=\(host) Default=YES MaxTime=INFINITE State=UP

            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        try start("/usr/sbin/slurmctld", ["-c", "-i"])
        try start("/usr/sbin/slurmd", [])
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let state = try Tool.run("sinfo", ["--noheader", "--format", "%t"], environment: environment)
            if state.out.contains("idle") { return }
            usleep(200_000)
        }
        stop()
        throw Tool.Failure(description: "the test Slurm node did not come up: \(log("slurmctld.log").suffix(600)) \(log("slurmd.log").suffix(600))")
    }

    deinit { stop() }

    /// Ends slurmd, slurmctld and munged (SIGKILL: nothing to save), by their PID files.
    public func stop() {
        for file in ["slurmd.pid", "slurmctld.pid", "munge/munged.pid"] {
            guard let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            kill(pid, SIGKILL)
            try? FileManager.default.removeItem(atPath: folder + "/" + file)
        }
    }

    /// A daemon's log, for failure messages.
    public func log(_ name: String) -> String { (try? String(contentsOfFile: folder + "/log/" + name, encoding: .utf8)) ?? "" }

    /// Runs a Slurm command against this cluster.
    @discardableResult
    public func command(_ name: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        try Tool.run(name, arguments, environment: environment)
    }

    /// Starts a daemon that forks into the background and returns once its first process has
    /// exited (posix_spawn and waitpid: the daemon keeps what it inherits open, so pipes would
    /// never reach their end). It inherits no descriptor but /dev/null as its standard ones;
    /// its signal mask is emptied.
    private func start(_ program: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else: a pipe another test has open right now (to read an ffmpeg it runs)
        // would otherwise stay open in the daemon, and that test would wait for its end until
        // the cluster stops.
        let inherited = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) }.filter { $0 > 2 }
        for descriptor in inherited where fcntl(descriptor, F_GETFD) >= 0 { posix_spawn_file_actions_addclose(&actions, descriptor) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let environment = ProcessInfo.processInfo.environment.merging(self.environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, program, &actions, &attributes, argv, envp) == 0 else {
            throw Tool.Failure(description: "cannot start \(program)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else {
            throw Tool.Failure(description: "\(program) did not start (wait status \(status)); logs in \(folder)/log")
        }
    }

    private static func installed(_ program: String) -> Bool {
        ["/usr/sbin/", "/usr/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + program) }
    }

    private static func shortHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(name.split(separator: ".").first ?? "localhost")
    }

    /// A loopback port nobody listens on now.
    private static func freePort() -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
