/// Placeholder until the event core lands.
