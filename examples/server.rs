//! The standalone leadtrack server: `cargo run --release --example server`.
//!
//! Serves the lead API on `127.0.0.1:8080` from the SQLite file `./leadtrack.db`, creating
//! it and a first project on the first run. `--help` lists the admin commands. The server
//! itself is the `leadtrack-server` crate; this example is its binary under the name the
//! README uses (`cargo run --release -p leadtrack-server` runs the same thing).

/// The allocator `leadtrack-server`'s own binary uses (see there).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    leadtrack_server::main()
}
