# frozen_string_literal: true

module Heron
  module Attack
    # The heron-attack gem's version (released together with heron's, the same number).
    VERSION = "0.1.0"
  end
end
