//! A characterization pin of `hypershift-adapter nodes --help`, here rather than beside the
//! other `nodes` pins (`src/pulse/nodes/source/tests/pins.rs`) because it reads the command
//! line, which nothing under `pulse/` may use (`architecture.rs`).
#![allow(clippy::unwrap_used)]

/// `hypershift-adapter nodes --help`, short and long: the about, every flag, its env var and
/// default, in order.
#[test]
fn pin_the_help() {
    use clap::CommandFactory;
    let mut cli = hypershift_adapter::cli::Cli::command();
    // Env values are hidden: the help shows those of the environment the test runs in.
    let nodes = cli
        .find_subcommand_mut("nodes")
        .unwrap()
        .clone()
        .mut_args(|a| a.hide_env_values(true));
    let mut nodes = nodes;
    let short = nodes.render_help().to_string();
    let long = nodes.render_long_help().to_string();
    insta::assert_snapshot!("help", format!("{short}\n----\n{long}"));
}
