"""The foundation every layer stands on: the row and its statuses, units, timestamps, thread settings, plain data."""
