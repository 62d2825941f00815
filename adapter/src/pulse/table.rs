//! The condition tables as data: for each situation a pulse can meet, what Applied, Available,
//! Health (and while deleting, Finalized) say, and what to do. The pages `docs/controlplane.md`
//! and `docs/nodepool.md` show them as rendered by [`Table::render`] (a test fails when a page
//! drifts; `cargo run -p testbed --bin docs-tables` rewrites them), and `diagnose` reads them to
//! know which reasons are the transport's.

use job_report::ConditionStatus;

/// What one condition says in a situation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cell {
    /// This status and reason, with a note on its message (`""`: none).
    Is(ConditionStatus, &'static str, &'static str),
    /// Words, where the condition depends on more than the situation (`from the health rows`).
    Text(&'static str),
    /// Nothing to say (the row is about another condition).
    Blank,
}

/// One situation and what the report says in it.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub situation: &'static str,
    /// Applied, Available, Health, and Finalized in a deletion stage.
    pub cells: &'static [Cell],
    pub todo: &'static str,
    /// Whether Applied (or Available) is the transport's or the work agent's word: a link of the
    /// management cluster diagnoses it better than the report.
    pub transport: bool,
}

/// The condition table of one object: its rows, and the stages of its deletion.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub rows: &'static [Row],
    pub deletion: &'static [Row],
}

/// A row of a table: `row!([transport] "situation" => cell, … => "what to do")`, each cell `_`
/// (blank), `[Status "Reason"]`, `[Status "Reason" "note"]` or `{"words"}`.
macro_rules! row {
    (transport $situation:literal => $($cell:tt),* => $todo:literal) => {
        $crate::pulse::table::Row { transport: true, ..$crate::pulse::table::row!($situation => $($cell),* => $todo) }
    };
    ($situation:literal => $($cell:tt),* => $todo:literal) => {
        $crate::pulse::table::Row {
            situation: $situation,
            cells: &[$($crate::pulse::table::cell!($cell)),*],
            todo: $todo,
            transport: false,
        }
    };
}

/// A cell of [`row!`].
macro_rules! cell {
    (_) => {
        $crate::pulse::table::Cell::Blank
    };
    ({ $text:literal }) => {
        $crate::pulse::table::Cell::Text($text)
    };
    ([$status:ident $reason:literal]) => {
        $crate::pulse::table::Cell::Is(job_report::ConditionStatus::$status, $reason, "")
    };
    ([$status:ident $reason:literal $note:literal]) => {
        $crate::pulse::table::Cell::Is(job_report::ConditionStatus::$status, $reason, $note)
    };
}

pub(crate) use {cell, row};

impl Cell {
    /// The cell as the pages show it.
    pub fn render(&self) -> String {
        match self {
            Cell::Is(status, reason, "") => format!("{} `{reason}`", status.as_str()),
            Cell::Is(status, reason, note) => format!("{} `{reason}` ({note})", status.as_str()),
            Cell::Text(text) => (*text).to_owned(),
            Cell::Blank => String::new(),
        }
    }

    /// Every reason the cell names.
    pub fn reasons(&self) -> Vec<&'static str> {
        match self {
            Cell::Is(_, reason, _) => vec![reason],
            Cell::Text(text) => backticked(text),
            Cell::Blank => Vec::new(),
        }
    }
}

/// The CamelCase words between backticks in `text`: the reasons it names.
fn backticked(text: &'static str) -> Vec<&'static str> {
    let reason = |w: &&str| {
        w.starts_with(|c: char| c.is_ascii_uppercase())
            && w.chars().all(|c| c.is_ascii_alphanumeric())
    };
    text.split('`').skip(1).step_by(2).filter(reason).collect()
}

impl Row {
    /// The row as a line of its page's table.
    pub fn render(&self) -> String {
        let mut line = format!("| {} |", self.situation);
        for cell in self
            .cells
            .iter()
            .map(Cell::render)
            .chain([self.todo.to_owned()])
        {
            match cell.as_str() {
                "" => line.push_str(" |"),
                text => line.push_str(&format!(" {text} |")),
            }
        }
        line
    }
}

/// The header of a table of situations, and of a table of deletion stages.
pub const HEADER: &str =
    "| situation | Applied | Available | Health | what to do |\n|---|---|---|---|---|\n";
pub const DELETION_HEADER: &str = "| deletion stage | Applied | Available | Health | Finalized | what to do |\n|---|---|---|---|---|---|\n";

impl Table {
    /// The two tables as the page shows them: the situations, and the deletion stages.
    pub fn render(&self) -> [String; 2] {
        let lines = |rows: &[Row]| rows.iter().map(|r| r.render() + "\n").collect::<String>();
        [
            format!("{HEADER}{}", lines(self.rows)),
            format!("{DELETION_HEADER}{}", lines(self.deletion)),
        ]
    }

    /// Every row, the deletion stages last.
    pub fn all(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().chain(self.deletion)
    }

    /// Every reason the table names.
    pub fn reasons(&self) -> Vec<&'static str> {
        let mut reasons: Vec<&str> = self
            .all()
            .flat_map(|r| r.cells.iter().flat_map(Cell::reasons))
            .collect();
        reasons.sort_unstable();
        reasons.dedup();
        reasons
    }

    /// Whether `reason`, of an Applied or Available that is not True, is the transport's or the
    /// work agent's word.
    pub fn is_transport(&self, reason: &str) -> bool {
        let says = |c: &Cell| matches!(c, Cell::Is(status, r, _) if *r == reason && *status != ConditionStatus::True);
        self.all()
            .any(|r| r.transport && r.cells.iter().take(2).any(says))
    }
}

#[cfg(test)]
#[path = "tests/table.rs"]
mod tests;
