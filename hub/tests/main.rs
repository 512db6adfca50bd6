//! The hub's acceptance tests, one binary: a module per behaviour, the support code built
//! once. Run one with `cargo test --release -p zeitnot-hub --test acceptance <module>::`.
//!
//! Every module starts what it needs (hubs, board nodes, brokers, browsers) on ports of its
//! own; `support/` is the harness.

mod support;

mod alert_precision;
mod alerts_desk;
mod alerts_e2e;
mod arbiter_links;
mod arbiter_logins;
mod arbiter_phones;
mod bad_input;
mod broadcast_feed;
mod broadcast_results;
mod broadcast_slices;
mod broker_list;
mod broker_unreachable;
mod chessnut_ble;
mod clock_readings_left_out;
mod clock_shown;
mod clockless_boards;
mod cluster_fence;
mod cluster_sealed;
mod dead_positions;
mod decisions;
mod demo;
mod dgt_chains;
mod dgt_streams;
mod docs_paths;
mod door_locked;
mod door_lows;
mod door_under_load;
mod filled_in;
mod forged_messages;
mod journal_damaged;
mod journal_full;
mod keep_alive;
mod laws_table;
mod live_boards;
mod livechess_boards;
mod login_flood;
mod mqtt_refusals;
mod nats_logins;
mod no_event_lost_embedded;
mod no_event_lost_mosquitto;
mod node_bindings;
mod node_boots;
mod node_swap;
mod ntfy_clients;
mod pairing_engine_loop;
mod pairing_files;
mod pairings_api;
mod pairings_page;
mod phone_view;
mod real_clocks;
mod real_games;
mod real_games_processes;
mod round_starts;
mod rounds;
mod sections;
mod shared_groups;
mod standby_hub;
mod standings_pages;
mod standings_round_robin;
mod standings_teams;
mod standings_trf;
mod start_undone;
mod stranger_off_loopback;
mod supervision_page;
mod team_round;
mod trf_board_order;
mod trf_files;
mod trust;
mod wire_sealed;
