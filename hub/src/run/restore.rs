//! The core folded over the journal, as a start, a recovery and the offline commands fold
//! it: a record or decision that cannot be read is counted and logged; the rest restores.

use anyhow::Context;
use protocol::BoardNo;

use super::clock::HubClock;
use crate::core::hub::{Hub, HubConfig, Journaled, Replayed, Restored};
use crate::edge::journal::{Journal, StoreError};
use crate::metrics::Metrics;

/// A core built from what the journal holds, the fold of a start and of a recovery alike;
/// the hub's clock never goes back before the journal's last record.
pub(crate) fn restored_hub(
    config: &HubConfig,
    journal: &Journal,
    metrics: &Metrics,
    clock: &mut HubClock,
) -> anyhow::Result<(Hub, Restored)> {
    let (hub, restored) = restore(config, journal, metrics)?;
    clock.not_before(hub.latest());
    Ok((hub, restored))
}

/// The core `hub serve` starts with: `config`'s, folded over what `journal` holds (the
/// benchmarks time it).
pub fn restore(
    config: &HubConfig,
    journal: &Journal,
    metrics: &Metrics,
) -> anyhow::Result<(Hub, Restored)> {
    let mut hub = Hub::new(config.clone());
    let restored = hub.restore(journaled(journal, metrics)?);
    Ok((hub, restored))
}

/// The journal as the core restores it. A record or decision that cannot be read is
/// counted and logged; the rest restores.
fn journaled<'a>(
    journal: &'a Journal,
    metrics: &'a Metrics,
) -> anyhow::Result<Journaled<impl Iterator<Item = Replayed> + 'a>> {
    let skipped = |what: &str, e: &dyn std::fmt::Display| {
        tracing::error!(error = %e, "{what} skipped");
        metrics.journal_records_skipped();
    };
    let alerts = journal
        .alerts()
        .filter_map(|alert| alert.map_err(|e| skipped("alert", &e)).ok())
        .collect();
    let decisions = journal
        .decisions()
        .filter_map(|decision| decision.map_err(|e| skipped("decision", &e)).ok())
        .collect();
    let rounds: Vec<crate::core::rounds::RoundStart> = journal
        .rounds()
        .filter_map(|start| start.map_err(|e| skipped("round start", &e)).ok())
        .collect();
    // Boards resume where a round's start kept their node: the events of their finished
    // rounds are not read (the archive has those games), only each board's head.
    let resume = Hub::resume_points(&rounds);
    let marks: std::collections::BTreeMap<BoardNo, protocol::Seq> =
        resume.iter().map(|(board, r)| (*board, r.mark)).collect();
    let games = journal
        .games()
        .filter_map(|game| game.map_err(|e| skipped("archived game", &e)).ok())
        .collect();
    let heads = journal.heads(&marks).filter_map(Result::ok).collect();
    // A damaged record takes its place in the board's sequence (the core goes on after it
    // and tells the arbiter); a key that is not a board's event at all is skipped.
    let records = journal
        .replay_after(marks)
        .filter_map(move |record| match record {
            Ok(record) => Some(Replayed::Record(record)),
            Err(StoreError::Unreadable { board, seq, why }) => {
                tracing::error!(%board, %seq, %why, "journal record unreadable");
                Some(Replayed::Damaged { board, seq })
            }
            Err(e) => {
                tracing::error!(error = %e, "journal record skipped");
                metrics.journal_records_skipped();
                None
            }
        });
    Ok(Journaled {
        rounds,
        games,
        records,
        heads,
        decisions,
        alerts,
        bindings: journal.bindings().context("reading the bindings")?,
        enrolments: journal.enrolments().context("reading the enrolled nodes")?,
        arbiters: journal
            .arbiters()
            .context("reading the enrolled arbiters")?,
        hall_secret: Some(journal.hall_secret().context("the hall's secret")?),
    })
}
