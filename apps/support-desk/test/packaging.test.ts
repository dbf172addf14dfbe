/**
 * What a published package and the repository promise a user: public packages with a repository
 * and publish settings, a `default` export condition (so `require()` works on Node 20.19+), and a
 * README that links only files inside the repository.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"

const root = new URL("../../../", import.meta.url)
const read = (path: string) => readFileSync(new URL(path, root), "utf8")
const packages = readdirSync(new URL("packages/", root)).map((dir) => ({
  dir,
  manifest: JSON.parse(read(`packages/${dir}/package.json`)) as {
    readonly name: string
    readonly repository?: { readonly url?: string; readonly directory?: string }
    readonly publishConfig?: { readonly access?: string }
    readonly exports: Record<string, unknown>
  }
}))

describe("packaging", () => {
  it("changesets publish the packages as public", () => {
    expect(JSON.parse(read(".changeset/config.json")).access).toBe("public")
  })

  it("every package names its repository and directory and publishes publicly", () => {
    for (const { dir, manifest } of packages) {
      expect(manifest.repository?.url, manifest.name).toMatch(/^git\+https:\/\/.+\.git$/)
      expect(manifest.repository?.directory, manifest.name).toBe(`packages/${dir}`)
      expect(manifest.publishConfig?.access, manifest.name).toBe("public")
    }
  })

  it("every export of every package has a default condition next to import, last", () => {
    for (const { manifest } of packages) {
      for (const [subpath, target] of Object.entries(manifest.exports)) {
        if (typeof target !== "object" || target === null) continue
        const conditions = Object.keys(target)
        expect(conditions, `${manifest.name} ${subpath}`).toContain("default")
        expect(conditions.at(-1), `${manifest.name} ${subpath}`).toBe("default")
        expect((target as Record<string, unknown>)["default"]).toBe((target as Record<string, unknown>)["import"])
      }
    }
  })

  it("the README links the architecture notes, never a file outside the repository", () => {
    const readme = read("README.md")
    expect(readme).not.toMatch(/\.\.\/shared|\]\(\.\.\//)
    for (const note of ["architecture/packages.md", "architecture/run.md", "architecture/pipelines.md"]) {
      expect(readme).toContain(`](${note})`)
      expect(read(note).length).toBeGreaterThan(0)
    }
  })
})
