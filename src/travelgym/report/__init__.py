"""The report shell: one self-contained HTML page over run directories of any suite."""
