import CLinuxIO
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Open-file-description lock commands (Linux ≥ 3.15); Glibc does not export them to Swift.
private let F_OFD_GETLK: Int32 = 36
private let F_OFD_SETLK: Int32 = 37
private let F_OFD_SETLKW: Int32 = 38

/// The only caller of the C library's file functions. Every call goes through a named
/// ``FaultPoint`` so tests can make it fail, and every failure becomes ``StorageError/Code/io``.
///
/// Sendable: the descriptor is immutable and the kernel serializes concurrent `pread`/`pwrite`.
package final class SystemFile: @unchecked Sendable {
    package let fd: Int32
    package let path: String
    package let writable: Bool

    private init(fd: Int32, path: String, writable: Bool) {
        self.fd = fd
        self.path = path
        self.writable = writable
    }

    deinit { close(fd) }

    package enum OpenMode: Sendable { case readOnly, readWrite, createNew, createOrOpen }

    /// Opens `path`; `createNew` fails with ``StorageError/Code/fileExists`` if it exists.
    package static func open(_ path: String, _ mode: OpenMode) throws -> SystemFile {
        if FaultInjection.shouldFail(.open) { throw ioError("open", EIO, path) }
        var flags: Int32 = O_CLOEXEC
        switch mode {
        case .readOnly: flags |= O_RDONLY
        case .readWrite: flags |= O_RDWR
        case .createNew: flags |= O_RDWR | O_CREAT | O_EXCL
        case .createOrOpen: flags |= O_RDWR | O_CREAT
        }
        let fd = Glibc.open(path, flags, 0o644)
        if fd < 0 {
            let e = errno
            if e == EEXIST { throw StorageError(.fileExists, "file already exists", path: path) }
            if e == ENOENT { throw StorageError(.fileNotFound, "no such file", path: path) }
            throw ioError("open", e, path)
        }
        return SystemFile(fd: fd, path: path, writable: mode != .readOnly)
    }

    static func ioError(_ op: String, _ e: Int32, _ path: String) -> StorageError {
        StorageError(.io, "\(op) failed", path: path, operation: op, errno: e)
    }

    /// The file's current size.
    package func size() throws -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.ioError("fstat", errno, path) }
        return Int(st.st_size)
    }

    /// Reads exactly `count` bytes at `offset` (fewer only at end of file).
    package func read(at offset: Int, count: Int) throws -> [UInt8] {
        var failure: Int32?
        let out = newBytes(count: count) { buffer in
            var done = 0
            while done < count {
                let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    break
                }
                if n == 0 { break }
                done += n
            }
            return done
        }
        if let failure { throw Self.ioError("pread", failure, path) }
        return out
    }

    /// Writes all of `bytes` at `offset`.
    package func write(_ bytes: [UInt8], at offset: Int) throws { try write(bytes[...], at: offset) }

    /// Writes all of `bytes` (a part of a larger buffer, not copied) at `offset`.
    package func write(_ bytes: ArraySlice<UInt8>, at offset: Int) throws {
        if FaultInjection.shouldFail(.pwrite) { throw Self.ioError("pwrite", EIO, path) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.ioError("pwrite", errno, path)
            }
            done += n
        }
        FaultInjection.note(path) { .write(offset: offset, bytes: Array(bytes)) }
    }

    /// Makes written data (and the size needed to read it) durable.
    package func syncData() throws {
        if FaultInjection.shouldFail(.fsync) { throw Self.ioError("fdatasync", EIO, path) }
        while fdatasync(fd) != 0 {
            if errno != EINTR { throw Self.ioError("fdatasync", errno, path) }
        }
        FaultInjection.note(path) { .sync }
    }

    /// Starts writing the `count` bytes at `offset` to the disk without waiting for them (Linux's
    /// `sync_file_range` with `SYNC_FILE_RANGE_WRITE`), so that the device works on a commit while
    /// its writer finishes its bookkeeping; ``syncData()`` still makes them durable, and waits
    /// less. Advisory: it makes nothing durable and reports nothing. A write-back error it meets
    /// is reported by the next `fdatasync` (the kernel keeps it for every descriptor), so it is no
    /// fault point.
    package func startWriteback(at offset: Int, count: Int) {
        #if os(Linux)
            _ = clinuxio_start_writeback(fd, Int64(offset), Int64(count))
        #endif
    }

    /// Makes data and metadata durable.
    package func syncAll() throws {
        if FaultInjection.shouldFail(.fsync) { throw Self.ioError("fsync", EIO, path) }
        while fsync(fd) != 0 {
            if errno != EINTR { throw Self.ioError("fsync", errno, path) }
        }
        FaultInjection.note(path) { .sync }
    }

    package func truncate(to length: Int) throws {
        if FaultInjection.shouldFail(.ftruncate) { throw Self.ioError("ftruncate", EIO, path) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw Self.ioError("ftruncate", errno, path) }
        FaultInjection.note(path) { .truncate(length: length) }
    }

    /// Gives `[0, length)` real disk blocks (`posix_fallocate`), so a shared mapping's stores into
    /// it can never meet a page without one: on a full disk such a store raises SIGBUS, while this
    /// call fails with `ENOSPC`, a typed error.
    package func allocate(length: Int) throws {
        if FaultInjection.shouldFail(.fallocate) { throw Self.ioError("posix_fallocate", ENOSPC, path) }
        var e: Int32
        repeat { e = posix_fallocate(fd, 0, off_t(length)) } while e == EINTR
        guard e == 0 else { throw Self.ioError("posix_fallocate", e, path) }
    }

    /// The file's inode number: with its device, what makes it the same file whatever the path.
    package func inode() throws -> UInt64 { UInt64(try status().st_ino) }

    /// The open file's `fstat`.
    private func status() throws -> stat {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Self.ioError("fstat", errno, path) }
        return st
    }

    /// The inode number of the file at `path` (symbolic links followed), nil if there is none.
    package static func inode(atPath path: String) -> UInt64? { identity(atPath: path)?.inode }

    /// Which file this is, whatever the name it is reached by: its device and inode numbers.
    package struct Identity: Hashable, Sendable {
        package var device: UInt64
        package var inode: UInt64
    }

    /// The open file's device and inode.
    package func identity() throws -> Identity {
        let st = try status()
        return Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// The device and inode of the file at `path` (symbolic links followed), nil if there is none.
    package static func identity(atPath path: String) -> Identity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Identity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// How many names (hard links) the open file has; 0 once its last name is gone.
    package func linkCount() throws -> Int { Int(try status().st_nlink) }

    // MARK: Locks (open-file-description locks: per open, released by the kernel when a process dies)

    package enum LockKind: Sendable { case shared, exclusive }

    /// Tries to lock one byte; returns false if another open file description holds a conflicting lock.
    package func tryLock(byte: Int, _ kind: LockKind) throws -> Bool {
        try lock(byte: byte, kind, wait: false)
    }

    /// Locks one byte, waiting for conflicting holders to release it.
    package func waitLock(byte: Int, _ kind: LockKind) throws {
        _ = try lock(byte: byte, kind, wait: true)
    }

    private func lock(byte: Int, _ kind: LockKind, wait: Bool) throws -> Bool {
        var fl = flock()
        fl.l_type = Int16(kind == .shared ? F_RDLCK : F_WRLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = off_t(byte)
        fl.l_len = 1
        fl.l_pid = 0
        while fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) != 0 {
            let e = errno
            if e == EINTR { continue }
            if !wait && (e == EAGAIN || e == EACCES) { return false }
            throw Self.ioError("fcntl(lock)", e, path)
        }
        return true
    }

    package func unlock(byte: Int) {
        var fl = flock()
        fl.l_type = Int16(F_UNLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = off_t(byte)
        fl.l_len = 1
        _ = fcntl(fd, F_OFD_SETLK, &fl)
    }

    /// Whether some other open file description holds a lock on `byte` that would conflict with an
    /// exclusive lock; returns the holder's pid when the kernel reports one (OFD locks report -1).
    package func isLockedByOther(byte: Int) throws -> Bool { try isLockedByOther(bytes: byte..<byte + 1) }

    /// Whether some other open file description holds a lock on any byte of `bytes`.
    package func isLockedByOther(bytes: Range<Int>) throws -> Bool {
        guard !bytes.isEmpty else { return false }
        var fl = flock()
        fl.l_type = Int16(F_WRLCK)
        fl.l_whence = Int16(SEEK_SET)
        fl.l_start = off_t(bytes.lowerBound)
        fl.l_len = off_t(bytes.count)
        fl.l_pid = 0
        guard fcntl(fd, F_OFD_GETLK, &fl) == 0 else { throw Self.ioError("fcntl(getlk)", errno, path) }
        return fl.l_type != Int16(F_UNLCK)
    }

    // MARK: Mapping

    /// Maps `length` bytes read-only and shared (the length may exceed the file; bytes past its end
    /// must never be touched). Returns the base address.
    package func mapReadOnly(length: Int) throws -> UnsafeRawPointer {
        UnsafeRawPointer(try map(length: length, protection: PROT_READ, flags: MAP_SHARED | MAP_NORESERVE))
    }

    /// Maps the first `length` bytes read-write and shared (the file must be at least that long).
    /// Returns the base address.
    package func mapReadWrite(length: Int) throws -> UnsafeMutableRawPointer {
        try map(length: length, protection: PROT_READ | PROT_WRITE, flags: MAP_SHARED)
    }

    private func map(length: Int, protection: Int32, flags: Int32) throws -> UnsafeMutableRawPointer {
        if FaultInjection.shouldFail(.mmap) { throw Self.ioError("mmap", ENOMEM, path) }
        let p = mmap(nil, length, protection, flags, fd, 0)
        guard let p, p != MAP_FAILED else { throw Self.ioError("mmap", errno, path) }
        return p
    }

    package static func unmap(_ base: UnsafeRawPointer, length: Int) {
        munmap(UnsafeMutableRawPointer(mutating: base), length)
    }

    /// `madvise(MADV_DONTNEED)` over a read-only shared file mapping: its resident pages leave this
    /// process and are read back from the file on the next access. Best effort.
    package static func adviseDontNeed(_ base: UnsafeRawPointer, length: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let rounded = (length + page - 1) / page * page
        guard rounded > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), rounded, MADV_DONTNEED)
    }

    // MARK: Paths

    /// Atomically renames `from` over `to`.
    package static func rename(_ from: String, _ to: String) throws {
        if FaultInjection.shouldFail(.rename) { throw ioError("rename", EIO, from) }
        guard Glibc.rename(from, to) == 0 else { throw ioError("rename", errno, from) }
    }

    /// fsyncs a directory so a rename or create in it is durable.
    package static func syncDirectory(_ dir: String) throws {
        let fd = Glibc.open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("open(dir)", errno, dir) }
        defer { close(fd) }
        if FaultInjection.shouldFail(.fsync) { throw ioError("fsync(dir)", EIO, dir) }
        guard fsync(fd) == 0 else { throw ioError("fsync(dir)", errno, dir) }
    }

    package static func unlink(_ path: String) { _ = Glibc.unlink(path) }

    /// `path` with every symbolic link and `.`/`..` resolved (`realpath`); for a file that does not
    /// exist yet, its directory resolved and its name appended; `path` itself when neither resolves.
    /// One file reached through two names then gets one lock file (Spec/FORMAT.md §7).
    package static func canonicalPath(_ path: String) -> String {
        if let r = realpath(path, nil) {
            defer { free(r) }
            return String(cString: r)
        }
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let r = realpath(dir, nil) else { return path }
        defer { free(r) }
        let resolved = String(cString: r)
        return (resolved.hasSuffix("/") ? resolved : resolved + "/") + name
    }

    package static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    package static let processID: Int32 = getpid()

    /// Changes in a child process after every `fork`: a store compares it with the value it read
    /// when it opened to refuse writing from a forked child, with an atomic load instead of a
    /// `getpid` system call per write transaction. (A child's `pthread_atfork` handler counts the
    /// forks; should installing it fail, the process ID serves.)
    package static var forkGeneration: UInt64 {
        forkHandlerInstalled ? forks.load(ordering: .relaxed) : UInt64(UInt32(bitPattern: getpid()))
    }
    private static let forks = Atomic<UInt64>(0)
    private static let forkHandlerInstalled: Bool =
        pthread_atfork(nil, nil) { _ = SystemFile.forks.wrappingAdd(1, ordering: .relaxed) } == 0
}
