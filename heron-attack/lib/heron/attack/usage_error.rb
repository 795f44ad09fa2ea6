# frozen_string_literal: true

module Heron
  module Attack
    # Raised for a bad command-line argument or targets file; the CLI prints its message on one
    # line and exits 2.
    class UsageError < StandardError; end
  end
end
