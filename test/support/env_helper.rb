# frozen_string_literal: true

# Sets environment variables for the length of a block.
module EnvHelper
  # @param vars [Hash{String => String, nil}] a nil value unsets the variable.
  # @yield with the variables set; they are restored (or unset) afterwards.
  def with_env(vars)
    saved = vars.keys.to_h { |key| [key, ENV[key]] }
    vars.each { |key, value| ENV[key] = value }
    yield
  ensure
    saved.each { |key, value| ENV[key] = value }
  end
end
