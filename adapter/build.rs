//! Compiles `proto/cloudevents.proto` with protox (no system protoc) and generates tonic/prost code.
//! The gRPC server half is generated only with the `server` feature (used by the testbed's fake Maestro).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/cloudevents.proto");
    let fds = protox::compile(["cloudevents.proto"], ["proto"])?;
    let server = std::env::var_os("CARGO_FEATURE_SERVER").is_some();
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(server)
        .compile_fds(fds)?;
    Ok(())
}
