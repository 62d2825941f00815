//! `cargo run --release -p testbed --bin local-pulse`: HyperFleet pulses of a HyperShift cluster
//! end to end on this machine, no cluster needed. See `testbed::local_pulse`.

fn main() -> std::process::ExitCode {
    testbed::local_pulse::main()
}
