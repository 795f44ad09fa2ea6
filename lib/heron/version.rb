# frozen_string_literal: true

module Heron
  # The gem's version, shown by `heron --version` and the start-up banner.
  VERSION = "0.1.0"
end
