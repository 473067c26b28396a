//! `beectl top`: a live view of the quota windows (used, trend, projection
//! to the reset), burn rates, active sessions and recent limit hits. It
//! redraws when beed says the ledger changed (one long-poll request at a
//! time, no polling storm), and every few seconds for the clocks; `q`
//! quits and the terminal is restored however it ends. When stdout is not
//! a terminal it prints the same view once, as text (`--json`: its
//! figures); with no ledger to show it says so in words, as every error.

use bee_daemon::ledger::views::calendar::Zone;
use bee_daemon::ledger::views::live;
use bee_daemon::ledger::views::prices::PriceTable;
use bee_daemon::rendered::Rendered;
use bee_proto::exit::Exit;
use bee_proto::ledger::{LEDGER_CHANGES_PATH, LedgerChanges, LiveView, LiveWindow};
use bee_proto::time::parse_rfc3339_ms;
use bee_proto::usage::{WindowKind, usd_text_bounded};
use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Gauge, Paragraph};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::render::ids::unique_prefixes;
use crate::render::terminal::{colour_wanted, counted, for_people, short_model, thousands};
use crate::render::{errors::unavailable, terminal::bar};

/// Redraw at least this often: countdowns move, sessions go quiet.
const REFRESH: Duration = Duration::from_secs(5);

pub fn top(timezone: Option<String>, once: bool, json: bool) -> Rendered {
    let zone = match timezone.as_deref().map(Zone::named).transpose() {
        Ok(zone) => zone.unwrap_or_else(Zone::local),
        Err(message) => return Rendered::invalid_usage(format!("--timezone: {message}")),
    };
    let dir = match crate::commands::ledger::ledger_dir() {
        Ok(dir) => dir,
        Err(rendered) => return rendered,
    };
    let prices = PriceTable::user_or_bundled();
    let read = || {
        let now = bee_proto::time::now_unix_ms();
        let mut view = live::view(&dir, now, &zone, &prices)?;
        live::add_events(&mut view, &recent_events(), now);
        Ok::<_, bee_proto::delivery::Issue>(view)
    };
    if json {
        return match read() {
            Ok(view) => Rendered::json(Exit::Success, &view),
            Err(issue) => crate::commands::ledger::ledger_unavailable(issue, &dir),
        };
    }
    // No ledger to show is said in words (on stderr, as every error), before
    // any screen is taken over.
    let first = match read() {
        Ok(view) => view,
        Err(issue) => return crate::commands::ledger::ledger_unavailable(issue, &dir),
    };
    if once || !for_people(None) {
        return Rendered { exit: Exit::Success, bytes: (text(&first).join("\n") + "\n").into_bytes() };
    }
    match run_live(&read, first) {
        Ok(()) => Rendered { exit: Exit::Success, bytes: Vec::new() },
        Err(message) => unavailable("io", Some(message)),
    }
}

/// beed's recent hook events, its default count (none when beed is down):
/// enough for the sessions of one screen, a fraction of the largest answer.
fn recent_events() -> Vec<serde_json::Value> {
    let path = bee_proto::events::EVENTS_RECENT_PATH;
    bee_proto::paths::socket_path()
        .and_then(|socket| bee_daemon::client::get(&socket, path, Duration::from_secs(2)).ok())
        .and_then(|answer| serde_json::from_slice(&answer.body).ok())
        .unwrap_or_default()
}

/// Restores the terminal when dropped: on `q`, on an error, on a panic.
struct Screen;

impl Screen {
    fn enter() -> std::io::Result<Screen> {
        crossterm::terminal::enable_raw_mode()?;
        let screen = Screen;
        crossterm::execute!(std::io::stdout(), crossterm::terminal::EnterAlternateScreen, crossterm::cursor::Hide)?;
        Ok(screen)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ =
            crossterm::execute!(std::io::stdout(), crossterm::cursor::Show, crossterm::terminal::LeaveAlternateScreen);
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn run_live(read: &dyn Fn() -> Result<LiveView, bee_proto::delivery::Issue>, first: LiveView) -> Result<(), String> {
    let screen = Screen::enter().map_err(|err| format!("the terminal: {err}"))?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ =
            crossterm::execute!(std::io::stdout(), crossterm::cursor::Show, crossterm::terminal::LeaveAlternateScreen);
        let _ = crossterm::terminal::disable_raw_mode();
        previous(info);
    }));
    let mut terminal = ratatui::Terminal::new(ratatui::backend::CrosstermBackend::new(std::io::stdout()))
        .map_err(|err| format!("the terminal: {err}"))?;
    let changed = watch_changes();
    let colour = colour_wanted();
    let mut view = Ok(first);
    let mut drawn = Instant::now();
    loop {
        terminal.draw(|frame| draw(frame, view.as_ref().ok(), colour)).map_err(|err| format!("drawing: {err}"))?;
        let deadline = drawn + REFRESH;
        loop {
            let left = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(100));
            if event::poll(left).map_err(|err| format!("the terminal: {err}"))? {
                match event::read().map_err(|err| format!("the terminal: {err}"))? {
                    Event::Key(key) if key.kind == KeyEventKind::Press => {
                        let quit = matches!(key.code, KeyCode::Char('q') | KeyCode::Esc)
                            || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL));
                        if quit {
                            drop(screen);
                            return Ok(());
                        }
                    }
                    Event::Resize(..) => break,
                    _ => {}
                }
            }
            if changed.try_recv().is_ok() {
                // Drain: one read for a burst of changes.
                while changed.try_recv().is_ok() {}
                break;
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        view = read();
        drawn = Instant::now();
    }
}

/// Sends on every ledger change beed reports, waiting on beed in between;
/// while beed is down, every few seconds (the view is then read offline).
fn watch_changes() -> mpsc::Receiver<()> {
    let (sender, receiver) = mpsc::channel();
    let _ = std::thread::Builder::new().name("ledger-changes".into()).spawn(move || {
        let mut seen: Option<u64> = None;
        loop {
            let path = match seen {
                Some(generation) => format!("{LEDGER_CHANGES_PATH}?after={generation}"),
                None => LEDGER_CHANGES_PATH.to_owned(),
            };
            let wait = Duration::from_secs(bee_proto::ledger::CHANGES_WAIT_SECONDS + 5);
            let answer = bee_proto::paths::socket_path()
                .and_then(|socket| bee_daemon::client::get(&socket, &path, wait).ok())
                .and_then(|answer| serde_json::from_slice::<LedgerChanges>(&answer.body).ok());
            match answer {
                Some(changes) => {
                    if seen.is_some_and(|g| g != changes.generation) && sender.send(()).is_err() {
                        return;
                    }
                    seen = Some(changes.generation);
                }
                None => {
                    seen = None;
                    std::thread::sleep(REFRESH);
                    if sender.send(()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}

fn window_name(window: &LiveWindow) -> String {
    let kind = match window.window.window {
        WindowKind::FiveHour => "five-hour",
        WindowKind::Weekly => "weekly",
        WindowKind::Other => "other",
    };
    format!("{} {kind} window", window.window.provider.as_str())
}

/// A window's lines after its gauge.
fn window_lines(window: &LiveWindow, now_ms: i64) -> Vec<String> {
    let w = &window.window;
    let resets = w
        .resets_at_utc
        .as_deref()
        .and_then(parse_rfc3339_ms)
        .and_then(|at| bee_proto::time::countdown(at, now_ms))
        .map_or("reset time unknown".to_owned(), |t| format!("resets in {t}"));
    let mut lines = vec![format!("{:.0}% used, {resets} (snapshot {})", w.used_percent, &w.observed_at_utc[11..16])];
    lines.push(match (window.trend_percent_per_hour, window.projected_percent_at_reset) {
        (Some(trend), Some(projected)) => {
            let full = match window.minutes_to_full {
                Some(m) => format!("; full in {} at this rate", bee_proto::time::minutes_text(m.round() as i64)),
                None if trend > 0.0 => "; at this rate it lasts past the reset".to_owned(),
                None => String::new(),
            };
            format!("projection: {projected:.0}% at the reset ({trend:+.1} points/h){full}")
        }
        (Some(trend), None) => format!("trend {trend:+.1} points/h; no reset time to project to"),
        _ if window.trend_snapshots >= 2 => format!(
            "no projection yet: its {} recent snapshots span under {} minutes",
            window.trend_snapshots,
            live::TREND_MIN_SPAN_MINUTES
        ),
        _ => "no projection: fewer than two snapshots in the last 30 minutes".to_owned(),
    });
    lines
}

/// The view as text lines, after the windows, every active session shown
/// (the one-shot print).
fn detail_lines(view: &LiveView) -> Vec<String> {
    details(view, usize::MAX)
}

/// The day's burn: an hour a character, from the day's start to now,
/// each as high as its tokens against the day's busiest hour (`▁`…`█`; an
/// hour without a response a space, one whose tokens no part knows `?`),
/// then the busiest hour and its tokens. `None` before the day's first
/// response.
fn day_burn(hours: &[bee_proto::ledger::HourTokens], zone: &str) -> Option<String> {
    const LEVELS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let peak = hours.iter().filter_map(|hour| hour.tokens.map(|tokens| (tokens, hour))).max_by_key(|(t, _)| *t);
    if hours.iter().all(|hour| hour.responses == 0) {
        return None;
    }
    let most = peak.map_or(0, |(tokens, _)| tokens);
    let line: String = hours
        .iter()
        .map(|hour| match hour.tokens {
            _ if hour.responses == 0 => ' ',
            None => '?',
            Some(_) if most == 0 => LEVELS[0],
            Some(tokens) => LEVELS[((tokens as f64 / most as f64) * 7.0).round() as usize],
        })
        .collect();
    let bound = hours.iter().any(|hour| hour.partial_parts > 0);
    let busiest = match peak {
        Some((tokens, hour)) if tokens > 0 => {
            // The hour in the view's zone, as the day is.
            let zone = bee_daemon::ledger::views::calendar::Zone::named(zone).ok();
            let at = bee_proto::time::parse_rfc3339_ms(&hour.hour_utc)
                .zip(zone)
                .map(|(ms, zone)| zone.local_minute(ms))
                .unwrap_or_else(|| hour.hour_utc.clone());
            let at = at.get(11..16).unwrap_or(&at);
            format!(", busiest {at}: {}{}", if bound { "≥" } else { "" }, thousands(tokens))
        }
        _ => String::new(),
    };
    Some(format!("  by hour |{line}|{busiest}"))
}

/// [`detail_lines`] with at most `sessions` session rows, the others
/// counted in a line of their own (the live view, where height is short).
fn details(view: &LiveView, sessions: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let today = &view.today;
    let bound = if today.partial_parts > 0 { "≥" } else { "" };
    let tokens = match today.tokens.total_tokens {
        Some(total) => format!("{bound}{} tokens", thousands(total)),
        None if today.responses + today.producer_counted_calls == 0 => "none".to_owned(),
        None => format!("tokens unknown ({} lacked a counter)", counted(today.partial_parts, "part")),
    };
    // A cost priced from a partial sum is a lower bound like the sum.
    let lower_bound = today.unpriced_parts + today.partial_parts > 0;
    let cost =
        today.estimated_cost_usd.map_or(String::new(), |c| format!(", est {}", usd_text_bounded(c, lower_bound)));
    lines.push(format!("Today ({}): {tokens}{cost}", view.timezone));
    if let Some(burn) = day_burn(&view.today_by_hour, &view.timezone) {
        lines.push(burn);
    }
    lines.push(String::new());
    lines.push(format!("Burn rate, last {} minutes:", live::BURN_MINUTES));
    if view.burn.is_empty() {
        lines.push("  no usage".to_owned());
    }
    for burn in &view.burn {
        let bound = if burn.partial_parts > 0 { "≥" } else { "" };
        let tokens = burn
            .tokens_per_minute
            .map_or("unknown".to_owned(), |t| format!("{bound}{} tokens/min", thousands(t.round() as u64)));
        let lower_bound = burn.unpriced_parts + burn.partial_parts > 0;
        let cost = burn.estimated_usd_per_hour.map_or(", cost unknown (unpriced model)".to_owned(), |c| {
            format!(", est {}/h", usd_text_bounded(c, lower_bound))
        });
        lines.push(format!("  {:<6} {tokens}{cost}", burn.provider.as_str()));
    }
    lines.push(String::new());
    lines.push("Active sessions (last hour):".to_owned());
    lines.extend(session_lines(view, sessions));
    lines.push(String::new());
    lines.push("Limit hits (last 24 hours):".to_owned());
    lines.extend(limit_lines(view));
    lines
}

/// The active sessions, at most `room` of them, each id cut to the
/// shortest prefix that tells it from the others shown (8 characters at
/// least, as git abbreviates): never two rows that read alike. Those left
/// out are counted, and where to see them said.
fn session_lines(view: &LiveView, room: usize) -> Vec<String> {
    if view.sessions.is_empty() {
        return vec!["  none".to_owned()];
    }
    let shown = &view.sessions[..view.sessions.len().min(room)];
    let ids: Vec<&str> = shown.iter().map(|session| session.session.as_deref().unwrap_or("(unknown)")).collect();
    let ids = unique_prefixes(&ids, 8);
    let width = ids.iter().map(|id| id.chars().count()).max().unwrap_or(0);
    let mut lines = Vec::new();
    for (session, id) in shown.iter().zip(&ids) {
        let models: Vec<&str> = session.models.iter().map(|m| short_model(m)).collect();
        let tokens = match (session.tokens_last_hour, session.partial_parts) {
            (Some(total), 0) => thousands(total),
            (Some(total), _) => format!("≥{}", thousands(total)),
            (None, 0) => "no".to_owned(),
            (None, _) => "unknown".to_owned(),
        };
        let event = session.last_event.as_deref().map_or(String::new(), |e| format!("  last event {e}"));
        lines.push(format!(
            "  {:<6} {id:<width$}  last {}  {tokens} tokens  {}{event}",
            session.provider.as_str(),
            &session.last_activity_utc[11..16],
            models.join(", ")
        ));
    }
    let left = view.sessions.len() - shown.len();
    if left > 0 {
        let noun = if left == 1 { "session" } else { "sessions" };
        lines.push(format!("  … and {left} more {noun}: beectl usage --by session"));
    }
    lines
}

/// The day's limit hits, and what is not known of them: "none" is said
/// only of agents whose records would hold a hit; the agents whose records
/// keep no usage-limit notice are named, their hits unknown.
fn limit_lines(view: &LiveView) -> Vec<String> {
    let mut lines = Vec::new();
    let unknown: Vec<&str> = view.not_recorded.limits.iter().map(|agent| agent.as_str()).collect();
    let recording: Vec<&str> =
        view.limit_hits.iter().filter(|agent| agent.hits.is_some()).map(|agent| agent.agent.as_str()).collect();
    if view.limits.is_empty() {
        match (unknown.is_empty(), recording.is_empty()) {
            (true, _) => lines.push("  none".to_owned()),
            (false, false) => lines.push(format!("  none from {}", recording.join(", "))),
            (false, true) => {}
        }
    }
    for hit in view.limits.iter().take(5) {
        let window = hit.window.map_or("window not named", |w| w.as_str());
        lines.push(format!("  {:<6} {} UTC  {window}", hit.provider.as_str(), &hit.at_utc[..16].replace('T', " ")));
    }
    if !unknown.is_empty() {
        lines.push(format!("  unknown for {}: their records keep no usage-limit notice", unknown.join(", ")));
    }
    lines
}

/// The one-shot text view.
fn text(view: &LiveView) -> Vec<String> {
    let now = parse_rfc3339_ms(&view.at_utc).unwrap_or(0);
    let mut lines = vec![format!("Bee top, {} UTC", &view.at_utc[..16].replace('T', " ")), String::new()];
    if view.windows.is_empty() {
        lines.push("No quota window: no provider sent a snapshot that has not reset.".to_owned());
    }
    for window in &view.windows {
        lines.push(format!("{}  {}", window_name(window), bar(window.window.used_percent)));
        lines.extend(window_lines(window, now).into_iter().map(|l| format!("  {l}")));
    }
    lines.push(String::new());
    lines.extend(detail_lines(view));
    lines
}

fn draw(frame: &mut ratatui::Frame<'_>, view: Option<&LiveView>, colour: bool) {
    let Some(view) = view else {
        frame.render_widget(Paragraph::new("The ledger cannot be read (no ledger yet?). q quits."), frame.area());
        return;
    };
    let now = parse_rfc3339_ms(&view.at_utc).unwrap_or(0);
    let paint = |style: Style| if colour { style } else { Style::default() };
    let mut constraints = vec![Constraint::Length(1)];
    constraints.extend(view.windows.iter().map(|_| Constraint::Length(5)));
    if view.windows.is_empty() {
        constraints.push(Constraint::Length(2));
    }
    constraints.push(Constraint::Min(0));
    let areas = Layout::vertical(constraints).split(frame.area());
    let title =
        format!("Bee top, {} UTC   (q quits; projections are projections)", &view.at_utc[..16].replace('T', " "));
    frame.render_widget(Paragraph::new(title).style(paint(Style::default().add_modifier(Modifier::BOLD))), areas[0]);
    for (n, window) in view.windows.iter().enumerate() {
        let area = areas[n + 1];
        let parts = Layout::vertical([Constraint::Length(3), Constraint::Length(2)]).split(area);
        let used = window.window.used_percent.clamp(0.0, 100.0);
        let hue = match used {
            ..50.0 => Color::Green,
            ..80.0 => Color::Yellow,
            _ => Color::Red,
        };
        let gauge = Gauge::default()
            .block(Block::bordered().title(window_name(window)))
            .gauge_style(paint(Style::default().fg(hue)))
            .ratio(used / 100.0)
            .label(format!("{:.0}%", window.window.used_percent));
        frame.render_widget(gauge, parts[0]);
        let lines: Vec<Line<'_>> =
            window_lines(window, now).into_iter().map(|l| Line::from(format!("  {l}"))).collect();
        frame.render_widget(Paragraph::new(lines), parts[1]);
    }
    if view.windows.is_empty() {
        frame.render_widget(
            Paragraph::new("No quota window: no provider sent a snapshot that has not reset."),
            areas[1],
        );
    }
    if let Some(area) = areas.last() {
        let height = usize::from(area.height);
        let mut lines = detail_lines(view);
        if lines.len() > height {
            // Sessions give way first, counted: the sections below them stay.
            let others = lines.len() - view.sessions.len();
            lines = details(view, height.saturating_sub(others + 1));
        }
        let lines = fitted(lines, height);
        frame.render_widget(Paragraph::new(lines.into_iter().map(Line::from).collect::<Vec<_>>()), *area);
    }
}

/// `lines` cut to `height`, the last line kept saying what was cut: a
/// short terminal never drops a section without a sign.
fn fitted(mut lines: Vec<String>, height: usize) -> Vec<String> {
    if lines.len() <= height || height == 0 {
        return lines;
    }
    let hidden = lines.len() - (height - 1);
    lines.truncate(height - 1);
    let sections: Vec<&str> = ["Burn rate", "Active sessions", "Limit hits"]
        .into_iter()
        .filter(|section| !lines.iter().any(|line| line.starts_with(section)))
        .collect();
    let named = if sections.is_empty() { String::new() } else { format!(" ({} below)", sections.join(", ")) };
    lines.push(format!("… {hidden} more lines{named}: a taller terminal, or beectl top --once"));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use bee_proto::ledger::{ActiveSession, BurnRate, Provider, UsageRow};
    use bee_proto::usage::Counters;

    fn view(today: UsageRow, burn: Vec<BurnRate>, sessions: Vec<ActiveSession>) -> LiveView {
        LiveView {
            schema_version: 1,
            at_utc: "2026-12-01T10:30:00.000Z".to_owned(),
            timezone: "UTC".to_owned(),
            today,
            windows: Vec::new(),
            burn,
            sessions,
            limits: Vec::new(),
            limit_hits: Vec::new(),
            not_recorded: Default::default(),
            today_by_hour: Vec::new(),
            issues: Vec::new(),
        }
    }

    fn session(tokens_last_hour: Option<u64>, partial_parts: u64) -> ActiveSession {
        ActiveSession {
            provider: Provider::Claude,
            session: Some("5eed0000-aaaa".to_owned()),
            models: vec!["claude-sonnet-4-5-20250929".to_owned()],
            last_activity_utc: "2026-12-01T10:29:00.000Z".to_owned(),
            tokens_last_hour,
            partial_parts,
            last_event: None,
        }
    }

    /// A day whose responses lack a counter: its sum and its estimate are
    /// lower bounds, and a sum nothing could be added to is unknown, never
    /// "none"; a session's hour likewise.
    #[test]
    fn partial_figures_read_as_lower_bounds_or_unknown() {
        let partial = UsageRow {
            responses: 2,
            tokens: Counters { total_tokens: Some(165), ..Counters::default() },
            partial_parts: 1,
            estimated_cost_usd: Some(0.00163875),
            ..UsageRow::default()
        };
        let burn = BurnRate {
            provider: Provider::Claude,
            minutes: 15,
            tokens_per_minute: Some(11.0),
            estimated_usd_per_hour: Some(0.0065),
            partial_parts: 1,
            unpriced_parts: 0,
        };
        let lines = detail_lines(&view(partial, vec![burn], vec![session(Some(165), 1)])).join("\n");
        assert!(lines.contains("Today (UTC): ≥165 tokens, est ≥$0.0016"), "{lines}");
        assert!(lines.contains("claude ≥11 tokens/min, est ≥$0.0065/h"), "{lines}");
        assert!(lines.contains("≥165 tokens  sonnet-4-5"), "{lines}");

        let unknown = UsageRow { responses: 1, partial_parts: 1, ..UsageRow::default() };
        let lines = detail_lines(&view(unknown, Vec::new(), vec![session(None, 1)])).join("\n");
        assert!(lines.contains("Today (UTC): tokens unknown (1 part lacked a counter)"), "{lines}");
        assert!(lines.contains("unknown tokens"), "{lines}");
        assert!(!lines.contains("Today (UTC): none"), "{lines}");

        let quiet = detail_lines(&view(UsageRow::default(), Vec::new(), vec![session(None, 0)])).join("\n");
        assert!(quiet.contains("Today (UTC): none"), "{quiet}");
        assert!(quiet.contains("no tokens"), "{quiet}");
    }

    /// The day's burn, an hour a character against the busiest: an hour
    /// without a response a space, one whose tokens no part knows `?`
    /// (never a low bar), a partial hour's figure a lower bound; nothing
    /// before the day's first response.
    #[test]
    fn the_days_burn_is_a_sparkline_of_its_hours() {
        let hour = |n: u32, responses: u64, tokens: Option<u64>, partial_parts: u64| bee_proto::ledger::HourTokens {
            hour_utc: format!("2026-12-01T{n:02}:00:00.000Z"),
            responses,
            tokens,
            partial_parts,
        };
        let hours = [
            hour(0, 0, Some(0), 0),
            hour(1, 2, Some(800), 0),
            hour(2, 1, None, 1),
            hour(3, 4, Some(1_600), 1),
            hour(4, 1, Some(100), 0),
        ];
        let burn = day_burn(&hours, "UTC").unwrap();
        assert_eq!(burn, "  by hour | ▅?█▁|, busiest 03:00: ≥1,600");
        let paris = day_burn(&hours, "Europe/Paris").unwrap();
        assert!(paris.ends_with("busiest 04:00: ≥1,600"), "{paris}");
        assert_eq!(day_burn(&[hour(0, 0, Some(0), 0), hour(1, 0, Some(0), 0)], "UTC"), None);
        let unknown = day_burn(&[hour(0, 3, None, 3)], "UTC").unwrap();
        assert_eq!(unknown, "  by hour |?|");
        let mut view = view(UsageRow::default(), Vec::new(), Vec::new());
        view.today_by_hour = hours.to_vec();
        assert!(detail_lines(&view).iter().any(|line| line.starts_with("  by hour |")), "drawn under today");
    }

    /// Every active session is shown once, or counted where the live view
    /// has no room; ids that share their first eight characters (pi's
    /// UUIDv7 times, OpenCode's `ses_` names) are cut where they differ,
    /// so no two rows read alike.
    #[test]
    fn every_session_is_shown_or_counted_and_no_two_read_alike() {
        let sessions: Vec<ActiveSession> = (0..15)
            .map(|n| ActiveSession {
                provider: if n % 2 == 0 { Provider::Pi } else { Provider::OpenCode },
                session: Some(if n % 2 == 0 {
                    format!("01a249a4-7c1e-7000-8000-0000000000{n:02}")
                } else {
                    format!("ses_db65{n:02}ffe")
                }),
                ..session(Some(10), 0)
            })
            .collect();
        let all = detail_lines(&view(UsageRow::default(), Vec::new(), sessions.clone()));
        let rows: Vec<&String> = all.iter().filter(|line| line.contains(" tokens  ")).collect();
        assert_eq!(rows.len(), 15, "{all:#?}");
        let distinct: std::collections::BTreeSet<&String> = rows.iter().copied().collect();
        assert_eq!(distinct.len(), 15, "two rows read alike: {all:#?}");
        assert!(rows.iter().any(|row| row.contains(" 01a249a4-7c1e-7000-8000-000000000004 ")), "{all:#?}");
        assert!(rows.iter().any(|row| row.contains(" ses_db6501 ")), "{all:#?}");
        assert!(!all.iter().any(|line| line.contains("more session")), "{all:#?}");

        let some = details(&view(UsageRow::default(), Vec::new(), sessions), 8);
        assert_eq!(some.iter().filter(|line| line.contains(" tokens  ")).count(), 8, "{some:#?}");
        assert!(some.contains(&"  … and 7 more sessions: beectl usage --by session".to_owned()), "{some:#?}");
        assert!(some.iter().any(|line| line.starts_with("Limit hits")), "the sections below stay: {some:#?}");
    }
    /// "Limit hits: none" is said only of agents whose records would hold
    /// a hit; those whose records keep none are named, their hits unknown.
    #[test]
    fn no_hit_is_said_only_of_agents_that_record_hits() {
        use bee_proto::ledger::{AgentLimitHits, NotRecorded};
        let mut mixed = view(UsageRow::default(), Vec::new(), Vec::new());
        mixed.limit_hits = vec![
            AgentLimitHits { agent: Provider::Claude, hits: Some(0) },
            AgentLimitHits { agent: Provider::OpenCode, hits: None },
        ];
        mixed.not_recorded = NotRecorded { time: Vec::new(), limits: vec![Provider::OpenCode] };
        let lines = limit_lines(&mixed).join("\n");
        assert_eq!(
            lines, "  none from claude\n  unknown for opencode: their records keep no usage-limit notice",
            "{lines}"
        );
        mixed.limit_hits.remove(0);
        let lines = limit_lines(&mixed).join("\n");
        assert!(!lines.contains("none") && lines.contains("unknown for opencode"), "{lines}");
        let quiet = view(UsageRow::default(), Vec::new(), Vec::new());
        assert_eq!(limit_lines(&quiet), ["  none"], "no agent that cannot record hits: none is the truth");
    }
}
