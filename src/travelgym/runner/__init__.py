"""The layered runner: agent/user specs -> objects, a resumable async batch, run directories."""
