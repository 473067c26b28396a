//! `beectl top`: a live view of the quota windows (used, trend, projection
//! to the reset), burn rates, active sessions and recent limit hits. It
//! redraws when beed says the ledger changed (one long-poll request at a
//! time, no polling storm), and every few seconds for the clocks; `q`
//! quits and the terminal is restored however it ends. When stdout is not
//! a terminal it prints the same view once, as text.

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
use std::io::IsTerminal;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::render::terminal::{colour_wanted, counted, short_model, thousands};
use crate::render::{errors::unavailable, terminal::bar};

/// Redraw at least this often: countdowns move, sessions go quiet.
const REFRESH: Duration = Duration::from_secs(5);

pub fn top(timezone: Option<String>, once: bool, json: bool) -> Rendered {
    let zone = match timezone.as_deref().map(Zone::named).transpose() {
        Ok(zone) => zone.unwrap_or_else(Zone::local),
        Err(message) => return Rendered::invalid_usage(format!("--timezone: {message}")),
    };
    let Some(dir) = bee_proto::paths::default_ledger_store() else {
        return unavailable("io", None);
    };
    let prices = PriceTable::bundled();
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
    if once || !std::io::stdout().is_terminal() {
        return match read() {
            Ok(view) => Rendered { exit: Exit::Success, bytes: (text(&view).join("\n") + "\n").into_bytes() },
            Err(issue) => crate::commands::ledger::ledger_unavailable(issue, &dir),
        };
    }
    match run_live(&read) {
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

fn run_live(read: &dyn Fn() -> Result<LiveView, bee_proto::delivery::Issue>) -> Result<(), String> {
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
    let mut view = read();
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

/// The view as text lines, after the windows (shared by the live view and the one-shot print).
fn detail_lines(view: &LiveView) -> Vec<String> {
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
    if view.sessions.is_empty() {
        lines.push("  none".to_owned());
    }
    for session in view.sessions.iter().take(8) {
        let id: String = session.session.as_deref().unwrap_or("(unknown)").chars().take(8).collect();
        let models: Vec<&str> = session.models.iter().map(|m| short_model(m)).collect();
        let tokens = match (session.tokens_last_hour, session.partial_parts) {
            (Some(total), 0) => thousands(total),
            (Some(total), _) => format!("≥{}", thousands(total)),
            (None, 0) => "no".to_owned(),
            (None, _) => "unknown".to_owned(),
        };
        let event = session.last_event.as_deref().map_or(String::new(), |e| format!("  last event {e}"));
        lines.push(format!(
            "  {:<6} {id}  last {}  {tokens} tokens  {}{event}",
            session.provider.as_str(),
            &session.last_activity_utc[11..16],
            models.join(", ")
        ));
    }
    lines.push(String::new());
    lines.push("Limit hits (last 24 hours):".to_owned());
    if view.limits.is_empty() {
        lines.push("  none".to_owned());
    }
    for hit in view.limits.iter().take(5) {
        let window = hit.window.map_or("window not named", |w| w.as_str());
        lines.push(format!("  {:<6} {} UTC  {window}", hit.provider.as_str(), &hit.at_utc[..16].replace('T', " ")));
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
        let lines = fitted(detail_lines(view), usize::from(area.height));
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
}
