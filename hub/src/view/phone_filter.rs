//! ntfy's subscription filters (`id`, `message`, `title`, `tags`, `priority`), as ntfy's
//! server applies them (`queryFilter.Pass`): a `message` event passes when it matches every
//! filter given; `open`, `keepalive` and `message_clear` always pass.

use serde_json::Value;

/// The filters of one subscription; the default passes everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhoneFilter {
    id: Option<String>,
    message: Option<String>,
    title: Option<String>,
    /// Every one of these tags.
    tags: Vec<String>,
    /// Any one of these priorities.
    priorities: Vec<u8>,
}

/// A `priority` filter ntfy would not take either (its error 40007).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid priority parameter: {0:?}")]
pub struct BadPriority(pub String);

/// The filters as a subscription's parameters give them (empty means none).
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterParams<'a> {
    pub id: Option<&'a str>,
    pub message: Option<&'a str>,
    pub title: Option<&'a str>,
    /// Comma-separated.
    pub tags: Option<&'a str>,
    /// Comma-separated numbers 1–5 or ntfy's names.
    pub priority: Option<&'a str>,
}

impl PhoneFilter {
    pub fn parse(params: FilterParams) -> Result<PhoneFilter, BadPriority> {
        let given = |p: Option<&str>| p.filter(|s| !s.is_empty()).map(str::to_owned);
        let list = |p: Option<&str>| -> Vec<String> {
            p.unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let priorities = list(params.priority)
            .into_iter()
            .map(|p| priority(&p).ok_or(BadPriority(p)))
            .collect::<Result<_, _>>()?;
        Ok(PhoneFilter {
            id: given(params.id),
            message: given(params.message),
            title: given(params.title),
            tags: list(params.tags),
            priorities,
        })
    }

    /// Whether `event` goes to the subscriber.
    pub fn pass(&self, event: &Value) -> bool {
        if event["event"] != "message" {
            return true;
        }
        let equals = |wanted: &Option<String>, field: &str| {
            wanted
                .as_deref()
                .is_none_or(|w| event[field].as_str() == Some(w))
        };
        // ntfy: a message without a priority has the default, 3.
        let priority = event["priority"].as_u64().unwrap_or(3);
        let tags: Vec<&str> = event["tags"]
            .as_array()
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        equals(&self.id, "id")
            && equals(&self.message, "message")
            && equals(&self.title, "title")
            && (self.priorities.is_empty()
                || self.priorities.iter().any(|&p| u64::from(p) == priority))
            && self.tags.iter().all(|t| tags.contains(&t.as_str()))
    }
}

/// A priority as ntfy reads one (`util.ParsePriority`).
fn priority(text: &str) -> Option<u8> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "min" => Some(1),
        "2" | "low" => Some(2),
        "3" | "default" => Some(3),
        "4" | "high" => Some(4),
        "5" | "max" | "urgent" => Some(5),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(priority: u64, tags: &[&str]) -> Value {
        json!({"id": "z0000000003m", "event": "message", "title": "Board 1 · 6.9",
               "message": "White's flag fell.", "priority": priority, "tags": tags})
    }

    #[test]
    fn no_filter_passes_everything() {
        let none = PhoneFilter::parse(FilterParams::default()).unwrap();
        assert!(none.pass(&message(1, &[])));
    }

    #[test]
    fn priorities_are_any_of_and_take_ntfys_names() {
        let urgent = PhoneFilter::parse(FilterParams {
            priority: Some("urgent,4"),
            ..Default::default()
        })
        .unwrap();
        assert!(urgent.pass(&message(5, &[])));
        assert!(urgent.pass(&message(4, &[])));
        assert!(!urgent.pass(&message(1, &[])));
        // A clear is not a message: the phone must still take the alert away.
        assert!(urgent.pass(&json!({"event": "message_clear", "priority": 1})));
        assert_eq!(
            PhoneFilter::parse(FilterParams {
                priority: Some("5,loud"),
                ..Default::default()
            }),
            Err(BadPriority("loud".into()))
        );
    }

    #[test]
    fn tags_are_all_of_and_texts_exact() {
        let filter = PhoneFilter::parse(FilterParams {
            tags: Some("rotating_light"),
            title: Some("Board 1 · 6.9"),
            ..Default::default()
        })
        .unwrap();
        assert!(filter.pass(&message(5, &["rotating_light", "x"])));
        assert!(!filter.pass(&message(5, &["warning"])));
        let other_title = PhoneFilter::parse(FilterParams {
            title: Some("Board 2"),
            ..Default::default()
        })
        .unwrap();
        assert!(!other_title.pass(&message(5, &["rotating_light"])));
    }
}
