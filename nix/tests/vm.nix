# NixOS VM test (flake check `vm`, Linux only): a declared plugin is linked from the store under
# its key, locked with its declarative grant, owned by the service user, kept alive by GC roots
# through a garbage collection, removed again when taken out of the configuration, and, once the
# runtime has a `tools` command, its tool is registered. `hermes serve` runs as the service (with
# the offline scripted provider), and a new generation reloads it (SIGHUP) without a restart.
#
#   nix build .#checks.x86_64-linux.vm -L
{ pkgs, self }:
let
  # A plugin built by Nix, as a user's flake would package one (named "source" on purpose: the
  # original linked by derivation name and two such plugins collided; ours links by key).
  weather = pkgs.runCommand "source" { } ''
    mkdir -p $out
    cat > $out/plugin.yaml <<'EOF'
    name: weather
    version: "1.0.0"
    description: weather tool (VM test)
    manifest_version: 2
    provides_tools: [weather_now]
    capabilities: [tools.override]
    EOF
    cat > $out/index.js <<'EOF'
    export function register(ctx) {
      ctx.register_tool({
        name: "weather_now",
        toolset: "weather",
        schema: { name: "weather_now", description: "Current weather", parameters: { type: "object", properties: {} } },
        handler: () => JSON.stringify({ success: true, weather: "sunny" }),
      });
    }
    EOF
  '';
  home = "/var/lib/hermes/.hermes";
  # The scripted provider answers without a network.
  script = pkgs.writeText "hermes-vm-script.yaml" ''
    - say: hello from the VM
  '';
in
pkgs.testers.runNixOSTest {
  name = "hermes-agent";

  nodes.machine = { lib, ... }: {
    imports = [ self.nixosModules.default ];
    services.hermes-agent = {
      enable = true;
      addToSystemPackages = true;
      extraPlugins = [ { package = weather; key = "weather"; grants = [ "tools.override" ]; settings.units = "metric"; } ];
      profiles.work.extraPlugins = [ weather ];
      settings.model = { provider = "scripted"; script = "${script}"; default = "test/model"; };
      # service.enable is the default: hermes serve on 127.0.0.1:8642.
    };
    environment.systemPackages = [ pkgs.jq pkgs.curl ];
    # The same machine with only a setting changed (only the deploy spec differs: a reload).
    specialisation.model.configuration = {
      services.hermes-agent.settings.model.default = lib.mkForce "test/other";
    };
    # The same machine without the plugin, to switch to.
    specialisation.removed.configuration = {
      services.hermes-agent.extraPlugins = lib.mkForce [ ];
      services.hermes-agent.profiles = lib.mkForce { };
    };
  };

  testScript = ''
    home = "${home}"
    hermes = f"sudo -u hermes hermes --home {home}"
    machine.wait_for_unit("multi-user.target")

    with subtest("the plugin is linked under its key, from the store, owned by the service user"):
        machine.succeed(f"test -L {home}/plugins/nix-managed-weather")
        target = machine.succeed(f"readlink -f {home}/plugins/nix-managed-weather").strip()
        assert target == "${weather}", target
        machine.succeed(f"test \"$(stat -c %U {home}/config.yaml)\" = hermes")
        machine.succeed(f"grep -q '\"kind\":\"nixos\"' {home}/.managed")

    with subtest("the lock records it, enabled, with the declarative grant; lock verify trusts the store path"):
        machine.succeed(f"jq -e '.plugins[] | select(.key == \"weather\") | .state == \"enabled\" and .origin == \"nix\" and .capabilities.consent == \"declarative\" and .capabilities.granted == [\"tools.override\"]' {home}/hermes.lock.json")
        machine.succeed(f"jq -e '.deployment.kind == \"nixos\"' {home}/hermes.lock.json")
        out = machine.succeed(f"{hermes} lock verify")
        assert "trusted" in out and "no drift" in out, out
        machine.succeed(f"test -L {home}/profiles/work/plugins/nix-managed-weather")

    with subtest("GC roots keep the plugin through a garbage collection"):
        machine.succeed("nix-store --gc --print-roots | grep -q 'generations/1/gcroots/plugins%2Fnix-managed-weather'")
        machine.succeed("nix-collect-garbage")
        machine.succeed("test -f ${weather}/plugin.yaml")

    with subtest("the tool is registered (once the runtime has a tools command)"):
        import re
        if re.search(r"^\s+tools\b", machine.succeed("hermes --help"), re.M):
            machine.succeed(f"{hermes} tools list --json | grep -q weather_now")
        else:
            machine.log("hermes has no `tools` command yet: tool registration is not checked")

    with subtest("hermes serve runs as the service on 127.0.0.1:8642"):
        machine.wait_for_unit("hermes-agent.service")
        machine.wait_for_open_port(8642)
        machine.succeed("curl -sf http://127.0.0.1:8642/health")
        machine.succeed("systemctl show -p ExecReload hermes-agent | grep -q 'kill -HUP'")

    with subtest("a new generation (only the spec changed) reloads the service: SIGHUP, same process"):
        pid = machine.succeed("systemctl show -p MainPID --value hermes-agent").strip()
        machine.succeed("/run/current-system/specialisation/model/bin/switch-to-configuration test")
        machine.succeed(f"grep -q 'test/other' {home}/config.yaml")
        machine.wait_until_succeeds("journalctl -u hermes-agent -o cat | grep -q 'serves new turns'")
        new_pid = machine.succeed("systemctl show -p MainPID --value hermes-agent").strip()
        assert new_pid == pid, f"hermes-agent restarted ({pid} -> {new_pid}) instead of reloading"
        machine.succeed("curl -sf http://127.0.0.1:8642/health")

    with subtest("removing the plugin from the configuration removes its link and releases the profile"):
        machine.succeed("/run/current-system/specialisation/removed/bin/switch-to-configuration test")
        machine.fail(f"test -e {home}/plugins/nix-managed-weather")
        machine.fail(f"test -e {home}/profiles/work/plugins/nix-managed-weather")
        machine.fail(f"test -e {home}/profiles/work/.managed")
        machine.succeed(f"jq -e '[.plugins[] | select(.key == \"weather\")] == []' {home}/hermes.lock.json")

    with subtest("rollback brings it back"):
        machine.succeed(f"{hermes} compile --rollback")
        machine.succeed(f"test -L {home}/plugins/nix-managed-weather")
  '';
}
