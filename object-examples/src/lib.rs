//! Example object types for the tour.
