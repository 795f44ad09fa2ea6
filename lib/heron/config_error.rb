# frozen_string_literal: true

module Heron
  # Raised for an invalid option or DSL value; the CLI prints its message on one line and exits 2.
  class ConfigError < StandardError; end
end
