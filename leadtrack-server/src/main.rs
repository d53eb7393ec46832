//! `leadtrack-server`: the standalone leadtrack server (`server --help` lists its commands).

/// jemalloc rather than the system allocator: with the server's threads (tokio's, the
/// SQLite readers', the writer's) it keeps less memory resident and allocates faster than
/// glibc's per-thread arenas (see `docs/performance.md`).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    leadtrack_server::main()
}
