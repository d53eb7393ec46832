//! `leadtrack-server`: the standalone leadtrack server (`server --help` lists its commands).

fn main() -> std::process::ExitCode {
    leadtrack_server::main()
}
